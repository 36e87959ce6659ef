// Recent: the account's last generations (no images are kept: format, size, the alt text, when, the
// options), each with a copy button; one or all can be deleted.
import { useEffect, useState } from 'preact/hooks'
import { api, type HistoryItem } from '../api'
import { type Confirmation, ConfirmDialog, CopyButton, ErrorMessage, Page, Status, useAction } from '../components'
import { formatBytes, formatDateTime } from '../format'
import { plural } from '../../../../shared/wording'

export function Recent() {
  const [items, setItems] = useState<HistoryItem[] | null>(null)
  const [said, setSaid] = useState('')
  const [ask, setAsk] = useState<Confirmation | null>(null)
  const list = useAction()
  const change = useAction()
  const reload = async () => {
    const answer = await list.run(api.history)
    if (answer) setItems(answer.items)
  }
  useEffect(() => void reload(), [])

  const remove = async (item: HistoryItem) => {
    const deleted = await change.run(async () => {
      await api.deleteHistoryItem(item.id)
      return true
    })
    if (!deleted) return
    setSaid(`Deleted the entry from ${formatDateTime(item.created_at)}.`)
    setItems((current) => current?.filter((other) => other.id !== item.id) ?? null)
  }
  const removeAll = () =>
    setAsk({
      title: 'Delete the whole history?',
      body: <p>Every entry below is deleted for good. Your keys, credits and the service's cache stay as they are.</p>,
      confirm: 'Delete everything',
      danger: true,
      run: async () => {
        const answer = await change.run(api.deleteHistory)
        if (!answer) return
        setSaid(`Deleted ${plural(answer.deleted, 'entry', 'entries')}.`)
        setItems([])
      },
    })

  return (
    <Page
      title="Recent"
      loading={items === null && !list.error}
      intro="The last 50 images your account described, newest first. Images themselves are never kept."
    >
      <Status message={said} />
      <ErrorMessage error={change.error} />
      <ErrorMessage error={list.error} />
      {items === null && !list.error && <p aria-busy="true">Loading your history…</p>}
      {items?.length === 0 && <p>Nothing here yet. Descriptions you make in Try it or with your keys appear here.</p>}
      {items && items.length > 0 && (
        <>
          <ul class="cards">
            {items.map((item, index) => (
              <li key={item.id} class="card">
                <h2 class="card-title">
                  <time dateTime={item.created_at}>{formatDateTime(item.created_at)}</time>
                </h2>
                {item.decorative ? (
                  <p>
                    <strong>Decorative</strong>: empty alt text.
                  </p>
                ) : (
                  <blockquote class="alt" id={`alt-${index}`}>
                    {item.alt_text}
                  </blockquote>
                )}
                <dl class="facts">
                  <div>
                    <dt>Image</dt>
                    <dd>
                      {item.image.format.toUpperCase()}, {item.image.width} × {item.image.height} px, {formatBytes(item.image.bytes)}
                      {item.source === 'upload' ? ', uploaded' : ', from a URL'}
                    </dd>
                  </div>
                  <div>
                    <dt>Options</dt>
                    <dd>
                      {item.language}, {item.style}, at most {item.max_length} characters
                    </dd>
                  </div>
                  <div>
                    <dt>Length</dt>
                    <dd>{plural(item.character_count, 'character')}</dd>
                  </div>
                  <div>
                    <dt>Credit</dt>
                    <dd>{item.cached ? 'cached: free' : '1 credit'}</dd>
                  </div>
                </dl>
                <div class="actions">
                  {!item.decorative && <CopyButton text={item.alt_text} label="Copy" />}
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => remove(item)}
                    disabled={change.busy}
                    aria-label={`Delete the entry from ${formatDateTime(item.created_at)}`}
                  >
                    Delete
                  </button>
                </div>
              </li>
            ))}
          </ul>
          <button type="button" class="danger" onClick={removeAll} disabled={change.busy}>
            Delete the whole history
          </button>
        </>
      )}
      <ConfirmDialog ask={ask} onClose={() => setAsk(null)} />
    </Page>
  )
}
