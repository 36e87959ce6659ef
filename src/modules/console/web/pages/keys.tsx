// API keys: the list (label, prefix, created, expires, last used), creating one with a label and an
// expiry, rotating (the old key stopping at once or after a grace period) and revoking, each confirmed;
// a new key is shown once.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, type KeySummary } from '../api'
import { type Confirmation, ConfirmDialog, ErrorMessage, Field, OnceKey, Page, SelectField, Status, useAction } from '../components'
import { formatDateTime } from '../format'

/** When a new key expires, in days (0: never). */
const EXPIRY_CHOICES = [
  { value: 0, text: 'Never' },
  { value: 7, text: 'In 7 days' },
  { value: 30, text: 'In 30 days' },
  { value: 90, text: 'In 90 days' },
  { value: 365, text: 'In a year' },
]

/** When a rotated key stops: at once, or after a grace period in which both keys work (seconds). */
const GRACE_CHOICES = [
  { value: 0, text: 'At once' },
  { value: 600, text: 'In 10 minutes' },
  { value: 3600, text: 'In 1 hour' },
  { value: 86_400, text: 'In 24 hours' },
]

const keyName = (key: { label: string | null; prefix: string }) => (key.label ? `“${key.label}” (${key.prefix})` : key.prefix)

export function Keys() {
  const [keys, setKeys] = useState<KeySummary[] | null>(null)
  const [fresh, setFresh] = useState<{ key: string; title: string; note?: string } | null>(null)
  // Read when the rotation is confirmed: the dialog's choice, reset each time it opens.
  const grace = useRef(0)
  const [said, setSaid] = useState('')
  const [ask, setAsk] = useState<Confirmation | null>(null)
  const list = useAction()
  const change = useAction()
  const reload = async () => {
    const answer = await list.run(api.keys)
    if (answer) setKeys(answer.keys)
  }
  useEffect(() => void reload(), [])

  const create = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const label = (form.elements.namedItem('label') as HTMLInputElement).value.trim()
    const days = Number((form.elements.namedItem('expiry') as HTMLSelectElement).value)
    const created = await change.run(() => api.createKey(label || null, days > 0 ? days : null))
    if (!created) return
    form.reset()
    setSaid('')
    setFresh({ key: created.api_key, title: `New key ${keyName(created)}` })
    await reload()
  }
  const rotate = (key: KeySummary) => {
    grace.current = 0
    setAsk({
      title: `Rotate ${keyName(key)}?`,
      body: (
        <>
          <p>A new key replaces it, with the same label and expiry. Programs that use it need the new key.</p>
          <SelectField
            id="rotate-grace"
            label="The old key stops working"
            hint="Keep it working for a while to switch your programs over without downtime."
            choices={GRACE_CHOICES}
            defaultValue="0"
            onChange={(event) => {
              grace.current = Number(event.currentTarget.value)
            }}
          />
        </>
      ),
      confirm: 'Rotate the key',
      run: async () => {
        const rotated = await change.run(() => api.rotateKey(key.prefix, grace.current))
        if (!rotated) return
        setSaid('')
        setFresh({
          key: rotated.api_key,
          title: `New key ${keyName(rotated)}, replacing ${rotated.revoked_prefix}`,
          note:
            grace.current > 0
              ? `The old key ${rotated.revoked_prefix} keeps working until ${formatDateTime(rotated.old_key_expires_at)}, then it expires.`
              : undefined,
        })
        await reload()
      },
    })
  }
  const revoke = (key: KeySummary) =>
    setAsk({
      title: `Revoke ${keyName(key)}?`,
      body: <p>The key stops working at once. This cannot be undone.</p>,
      confirm: 'Revoke the key',
      danger: true,
      run: async () => {
        const revoked = await change.run(() => api.revokeKey(key.prefix))
        if (!revoked) return
        setFresh(null)
        setSaid(`Key ${revoked.prefix} is revoked.`)
        await reload()
      },
    })

  return (
    <Page
      title="API keys"
      loading={keys === null && !list.error}
      intro="Programs send a key in the X-API-Key header. The console itself needs none: you are signed in."
    >
      {fresh && (
        <OnceKey apiKey={fresh.key} title={fresh.title} onDone={() => setFresh(null)}>
          {fresh.note && <p id="old-key-until">{fresh.note}</p>}
        </OnceKey>
      )}
      <Status message={said} />
      <ErrorMessage error={change.error} />
      <section aria-labelledby="list-h">
        <h2 id="list-h">Your keys</h2>
        <ErrorMessage error={list.error} />
        {keys === null && !list.error && <p aria-busy="true">Loading your keys…</p>}
        {keys?.length === 0 && <p>You have no active key. Create one below.</p>}
        {keys && keys.length > 0 && (
          <ul class="cards">
            {keys.map((key) => (
              <li key={key.prefix} class="card">
                <h3>{key.label ?? <span class="muted">No label</span>}</h3>
                <dl class="facts">
                  <div>
                    <dt>Prefix</dt>
                    <dd>
                      <code>{key.prefix}</code>
                    </dd>
                  </div>
                  <div>
                    <dt>Created</dt>
                    <dd>{formatDateTime(key.created_at)}</dd>
                  </div>
                  <div>
                    <dt>Expires</dt>
                    <dd>{formatDateTime(key.expires_at)}</dd>
                  </div>
                  <div>
                    <dt>Last used</dt>
                    <dd>{formatDateTime(key.last_used_at)}</dd>
                  </div>
                </dl>
                <div class="actions">
                  <button type="button" class="secondary" onClick={() => rotate(key)} aria-label={`Rotate ${keyName(key)}`} disabled={change.busy}>
                    Rotate
                  </button>
                  <button type="button" class="danger" onClick={() => revoke(key)} aria-label={`Revoke ${keyName(key)}`} disabled={change.busy}>
                    Revoke
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="create-h">
        <h2 id="create-h">Create a key</h2>
        <form onSubmit={create} class="narrow">
          <Field
            id="key-label"
            name="label"
            label="Label (optional)"
            hint="Say where the key is used, e.g. “staging CMS”."
            maxLength={100}
            autocomplete="off"
          />
          <SelectField id="key-expiry" name="expiry" label="Expires" choices={EXPIRY_CHOICES} />
          <button type="submit" disabled={change.busy}>
            Create the key
          </button>
        </form>
      </section>
      <ConfirmDialog ask={ask} onClose={() => setAsk(null)} />
    </Page>
  )
}
