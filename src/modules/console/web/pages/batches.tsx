// Batches: the organisation's batches, and one batch's results. Reviewing them is the review queue's
// (a batch sent with `review: true` puts its items there): a batch links to its items in the queue.
import { useEffect, useState } from 'preact/hooks'
import { api, type Batch, type BatchSummary } from '../api'
import { ErrorMessage, Link, Page, useAction } from '../components'
import { formatDateTime } from '../format'
import { plural } from '../../../../shared/wording'
import { filtersPath, readFilters } from '../review'
import { useLocation } from '../router'

export function Batches() {
  useLocation()
  const id = new URLSearchParams(location.search).get('id')
  return id ? <BatchResults key={id} id={id} /> : <BatchList />
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
      intro="Your batches, newest first. Open one to see its alt texts; those sent with review: true wait in the review queue."
    >
      <ErrorMessage error={list.error} />
      {batches === null && !list.error && <p aria-busy="true">Loading your batches…</p>}
      {batches?.length === 0 && <p>No batches yet. Batches are sent to POST /api/batches with a key.</p>}
      {batches && batches.length > 0 && (
        <ul class="cards">
          {batches.map((batch) => (
            <li key={batch.id} class="card">
              <h2 class="card-title">
                <Link href={`/batches?id=${encodeURIComponent(batch.id)}`}>Batch {batch.id}</Link>
              </h2>
              <p>
                {batch.status}, {plural(batch.total, 'item')}: {batch.succeeded} done, {batch.failed} failed; created{' '}
                <time dateTime={batch.created_at}>{formatDateTime(batch.created_at)}</time>
              </p>
              <p>
                <Link href={filtersPath({ ...readFilters(''), status: 'all', batch: batch.id })}>
                  <span class="visually-hidden">Batch {batch.id}: </span>its items in the review queue
                </Link>
              </p>
            </li>
          ))}
        </ul>
      )}
    </Page>
  )
}

function BatchResults(props: { id: string }) {
  const [batch, setBatch] = useState<Batch | null>(null)
  const load = useAction()
  useEffect(() => {
    void load.run(() => api.batch(props.id)).then((answer) => answer && setBatch(answer))
  }, [props.id])
  const done = (batch?.items ?? []).filter((item) => item.status === 'done' && item.result)
  return (
    <Page
      title={`Batch ${props.id}`}
      loading={batch === null && !load.error}
      intro="The alt texts this batch made. A batch sent with review: true puts each of them in the review queue, where reviewers accept, edit or reject them."
    >
      <p>
        <Link href="/batches">All batches</Link> ·{' '}
        <Link href={filtersPath({ ...readFilters(''), status: 'all', batch: props.id })}>Review this batch's items</Link>
      </p>
      <ErrorMessage error={load.error} />
      {batch === null && !load.error && <p aria-busy="true">Loading the batch…</p>}
      {batch && done.length === 0 && (
        <p>
          No results yet: {batch.status}, {plural(batch.succeeded, 'item')} done.
        </p>
      )}
      {done.length > 0 && (
        <ul class="cards">
          {done.map((item) => (
            <li key={item.index} class="card">
              <h2 class="card-title">Item {item.index + 1}</h2>
              {item.metadata && <p class="hint">{JSON.stringify(item.metadata)}</p>}
              {item.result?.decorative ? (
                <p>
                  <strong>Decorative</strong>: empty alt text.
                </p>
              ) : (
                <blockquote class="alt">{item.result?.alt_text}</blockquote>
              )}
            </li>
          ))}
        </ul>
      )}
    </Page>
  )
}
