// Batches: the account's batches, and one batch's results for review before they land (see review.ts):
// accept, edit or reject each proposed alt text, then export the accepted and edited rows as CSV. Every
// change is announced in the page's status region; focus stays on the control that was used, or moves to
// the edit field and back.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, type Batch, type BatchSummary } from '../api'
import { ErrorMessage, Link, Page, Status, useAction, useApp } from '../components'
import { formatDateTime } from '../format'
import { plural } from '../../../../shared/wording'
import { type Decision, type Decisions, loadDecisions, type ReviewRow, reviewCsv, saveDecisions } from '../review'
import { useLocation } from '../router'

export function Batches() {
  useLocation()
  const id = new URLSearchParams(location.search).get('id')
  return id ? <BatchReview key={id} id={id} /> : <BatchList />
}

function BatchList() {
  const [batches, setBatches] = useState<BatchSummary[] | null>(null)
  const list = useAction()
  useEffect(() => {
    void list.run(api.batches).then((answer) => answer && setBatches(answer.items))
  }, [])
  return (
    <Page
      title="Batches"
      loading={batches === null && !list.error}
      intro="Your batches, newest first. Open one to review its alt texts before they are published."
    >
      <ErrorMessage error={list.error} />
      {batches === null && !list.error && <p aria-busy="true">Loading your batches…</p>}
      {batches?.length === 0 && <p>No batches yet. Batches are sent to POST /api/batches with a key.</p>}
      {batches && batches.length > 0 && (
        <ul class="cards">
          {batches.map((batch) => (
            <li key={batch.id} class="card">
              <h2 class="card-title">
                <Link href={`/batches?id=${encodeURIComponent(batch.id)}`}>Review {batch.id}</Link>
              </h2>
              <p>
                {batch.status}, {plural(batch.total, 'item')}: {batch.succeeded} done, {batch.failed} failed; created{' '}
                <time dateTime={batch.created_at}>{formatDateTime(batch.created_at)}</time>
              </p>
            </li>
          ))}
        </ul>
      )}
    </Page>
  )
}

const DECISION_TEXT: Record<Decision['kind'] | 'open', string> = { open: 'not reviewed', accepted: 'accepted', edited: 'edited', rejected: 'rejected' }

function BatchReview(props: { id: string }) {
  const { session } = useApp()
  const email = session?.email ?? ''
  const [batch, setBatch] = useState<Batch | null>(null)
  const [decisions, setDecisions] = useState<Decisions>(() => loadDecisions(email, props.id))
  const [editing, setEditing] = useState<number | null>(null)
  const [draft, setDraft] = useState('')
  const [said, setSaid] = useState('')
  const load = useAction()
  const returnTo = useRef<string | null>(null)
  useEffect(() => {
    void load.run(() => api.batch(props.id)).then((answer) => answer && setBatch(answer))
  }, [props.id])

  const rows: ReviewRow[] = useMemo(
    () =>
      (batch?.items ?? [])
        .filter((item) => item.status === 'done' && item.result)
        .map((item) => ({ index: item.index, proposed: item.result?.alt_text ?? '', decorative: item.result?.decorative === true, metadata: item.metadata })),
    [batch],
  )

  const decide = (index: number, decision: Decision, message: string) => {
    const next = { ...decisions, [index]: decision }
    setDecisions(next)
    saveDecisions(email, props.id, next)
    setSaid(message)
  }
  const startEdit = (row: ReviewRow) => {
    const current = decisions[row.index]
    setDraft(current?.kind === 'edited' ? current.alt : row.proposed)
    setEditing(row.index)
    returnTo.current = `edit-${row.index}`
  }
  const endEdit = () => {
    setEditing(null)
    // Back to the button that opened the editor, so keyboard users keep their place.
    requestAnimationFrame(() => (returnTo.current ? document.getElementById(returnTo.current)?.focus() : undefined))
  }
  const save = (row: ReviewRow) => {
    const alt = draft.trim()
    decide(
      row.index,
      alt === row.proposed ? { kind: 'accepted' } : { kind: 'edited', alt },
      `Item ${row.index + 1}: ${alt === row.proposed ? 'accepted' : 'edited'}.`,
    )
    endEdit()
  }
  useEffect(() => {
    if (editing !== null) document.getElementById(`alt-edit-${editing}`)?.focus()
  }, [editing])

  const kept = rows.filter((row) => decisions[row.index] && decisions[row.index]?.kind !== 'rejected').length
  const exportCsv = () => {
    const blob = new Blob([reviewCsv(props.id, rows, decisions)], { type: 'text/csv;charset=utf-8' })
    const link = document.createElement('a')
    link.href = URL.createObjectURL(blob)
    link.download = `${props.id}-review.csv`
    link.click()
    setTimeout(() => URL.revokeObjectURL(link.href), 0)
    setSaid(`Exported ${plural(kept, 'row')} as CSV.`)
  }

  return (
    <Page
      title={`Review ${props.id}`}
      loading={batch === null && !load.error}
      intro="Accept, edit or reject each proposed alt text, then export the accepted and edited ones as CSV. Your decisions are kept in this browser tab only, not by the service: export before you close it."
    >
      <p>
        <Link href="/batches">All batches</Link>
      </p>
      <Status message={said} />
      <ErrorMessage error={load.error} />
      {batch === null && !load.error && <p aria-busy="true">Loading the batch…</p>}
      {batch && rows.length === 0 && (
        <p>
          No results to review yet: {batch.status}, {plural(batch.succeeded, 'item')} done.
        </p>
      )}
      {rows.length > 0 && (
        <>
          <p>
            {plural(rows.length, 'result')}; {plural(kept, 'row')} to export.{' '}
            <button type="button" onClick={exportCsv} disabled={kept === 0}>
              Export accepted and edited as CSV
            </button>
          </p>
          <ul class="cards">
            {rows.map((row) => {
              const decision = decisions[row.index]
              const number = row.index + 1
              return (
                <li key={row.index} class="card">
                  <h2 class="card-title">Item {number}</h2>
                  {row.metadata && <p class="hint">{JSON.stringify(row.metadata)}</p>}
                  {row.decorative ? (
                    <p>
                      <strong>Decorative</strong>: empty alt text.
                    </p>
                  ) : (
                    <blockquote class="alt">{row.proposed}</blockquote>
                  )}
                  <p>
                    Decision: <strong>{DECISION_TEXT[decision?.kind ?? 'open']}</strong>
                    {decision?.kind === 'edited' && <> as “{decision.alt}”</>}
                  </p>
                  {editing === row.index ? (
                    <form
                      onSubmit={(event) => {
                        event.preventDefault()
                        save(row)
                      }}
                    >
                      <div class="field">
                        <label for={`alt-edit-${row.index}`}>Alt text for item {number}</label>
                        <textarea id={`alt-edit-${row.index}`} value={draft} onInput={(event) => setDraft(event.currentTarget.value)} rows={3} />
                      </div>
                      <div class="actions">
                        <button type="submit">Save</button>
                        <button type="button" class="secondary" onClick={endEdit}>
                          Cancel
                        </button>
                      </div>
                    </form>
                  ) : (
                    <div class="actions">
                      <button
                        type="button"
                        onClick={() => decide(row.index, { kind: 'accepted' }, `Item ${number}: accepted.`)}
                        aria-label={`Accept item ${number}`}
                      >
                        Accept
                      </button>
                      <button type="button" class="secondary" id={`edit-${row.index}`} onClick={() => startEdit(row)} aria-label={`Edit item ${number}`}>
                        Edit
                      </button>
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => decide(row.index, { kind: 'rejected' }, `Item ${number}: rejected.`)}
                        aria-label={`Reject item ${number}`}
                      >
                        Reject
                      </button>
                    </div>
                  )}
                </li>
              )
            })}
          </ul>
        </>
      )}
    </Page>
  )
}
