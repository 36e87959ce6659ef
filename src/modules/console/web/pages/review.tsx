// The organisation's review queue (GET /api/suggestions): each suggestion's image, where its alt text
// goes, the current and the proposed alt text side by side, the WCAG checks and the judge's verdict.
// Reviewers decide by button or by key (a accept, e edit, r reject, j/k next/previous, u undo); every
// decision is the service's at once, so another browser or reviewer sees it. Authors see the queue only.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { ApiFailure, api, atLeast, type Suggestion } from '../api'
import { type Confirmation, ConfirmDialog, ErrorMessage, Field, Link, Page, SelectField, Status, useAction, useApp } from '../components'
import { formatDateTime } from '../format'
import { plural } from '../../../../shared/wording'
import { orgLabel, roleName } from '../org-switcher'
import { apiFilters, filtersPath, nextPending, type QueueFilters, readFilters, STATUS_CHOICES } from '../review'
import { navigate, useLocation } from '../router'

const PAGE_SIZE = 25
/** POST /api/suggestions/accept takes at most this many ids at once. */
const ACCEPT_MANY_LIMIT = 100

const STATUS_TEXT: Record<Suggestion['status'], string> = { pending: 'pending', accepted: 'accepted', edited: 'accepted with an edit', rejected: 'rejected' }
const VERDICT_TEXT: Record<string, string> = {
  ok: 'the alt text serves a blind reader',
  needs_fix: 'the alt text needs a fix',
  decorative: 'the image is decorative (alt="")',
  keyword_stuffed: 'the alt text is a list of keywords',
}

/** A key press the queue acts on: not one typed into a field, nor one with a modifier (those are the browser's). */
function queueKey(event: KeyboardEvent): 'a' | 'e' | 'r' | 'j' | 'k' | 'u' | null {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return null
  const target = event.target as HTMLElement | null
  if (target?.closest('input, textarea, select, [contenteditable], dialog')) return null
  const key = event.key.toLowerCase()
  return key === 'a' || key === 'e' || key === 'r' || key === 'j' || key === 'k' || key === 'u' ? key : null
}

type Mode = { kind: 'edit' | 'reject'; id: string } | null

export function Review() {
  const { org } = useApp()
  const { moves } = useLocation()
  const search = location.search
  const filters = readFilters(search)
  const reviewer = org === null || atLeast(org.role, 'reviewer')
  const [items, setItems] = useState<Suggestion[] | null>(null)
  const [cursor, setCursor] = useState<string | null>(null)
  const [total, setTotal] = useState(0)
  const [current, setCurrent] = useState(0)
  const [mode, setMode] = useState<Mode>(null)
  const [draft, setDraft] = useState('')
  const [reason, setReason] = useState('')
  const [said, setSaid] = useState('')
  const [ask, setAsk] = useState<Confirmation | null>(null)
  // Suggestions someone else decided while this page showed them pending: their cards say so.
  const [overtaken, setOvertaken] = useState<Set<string>>(new Set())
  // What u undoes: the ids of each decision made in this page, newest last (accept-all is one entry).
  const undo = useRef<string[][]>([])
  // The card (by index) or field (by id) to focus once the next render is on screen.
  const focusNext = useRef<number | string | null>(null)
  const list = useAction()
  const act = useAction()

  const load = async (from: string | null) => {
    const answer = await list.run(() => api.suggestions(apiFilters(filters), from, PAGE_SIZE))
    if (!answer) return null
    // The service may not filter by batch: the page does, so a batch's link shows that batch only.
    const shown = filters.batch ? answer.suggestions.filter((each) => each.batch_id === filters.batch) : answer.suggestions
    setCursor(answer.next_cursor)
    setTotal(answer.total)
    return shown
  }
  const reload = async (message?: string) => {
    const first = await load(null)
    if (!first) return
    setItems(first)
    setCurrent(0)
    setMode(null)
    setSaid(message ?? `${plural(first.length, 'suggestion')} shown.`)
  }
  useEffect(() => {
    void load(null).then((first) => {
      if (!first) return
      setItems(first)
      setCurrent(0)
      setMode(null)
      // Said after a change of filters only: the first visit reads the page itself.
      if (moves > 0) setSaid(`${plural(first.length, 'suggestion')} shown.`)
    })
  }, [search])

  // Before the next key press is handled: a key typed right after r or e lands in the field it opened.
  useLayoutEffect(() => {
    const target = focusNext.current
    if (target === null) return
    focusNext.current = null
    const element = typeof target === 'number' ? document.getElementById(`suggestion-${items?.[target]?.id}`) : document.getElementById(target)
    element?.focus()
  })

  const replace = (fresh: Suggestion) => setItems((now) => now?.map((each) => (each.id === fresh.id ? fresh : each)) ?? null)
  const numberOf = (item: Suggestion) => (items?.findIndex((each) => each.id === item.id) ?? 0) + 1

  /** Runs one decision; a 409 means another reviewer was quicker: the card is read again and says so. */
  const decide = async (item: Suggestion, work: () => Promise<Suggestion>, done: (fresh: Suggestion) => string) => {
    const fresh = await act.run(async () => {
      try {
        return await work()
      } catch (failure) {
        if (failure instanceof ApiFailure && (failure.code === 'already_decided' || failure.code === 'not_decided')) {
          const now = await api.suggestion(item.id).catch(() => null)
          if (now) replace(now)
          if (failure.code === 'already_decided') setOvertaken((ids) => new Set(ids).add(item.id))
          setSaid('')
        }
        throw failure
      }
    })
    setMode(null)
    if (!fresh) {
      focusNext.current = numberOf(item) - 1
      return null
    }
    replace(fresh)
    setSaid(done(fresh))
    return fresh
  }
  const afterDecision = (item: Suggestion, fresh: Suggestion | null) => {
    if (!fresh || !items) return
    undo.current.push([item.id])
    const index = numberOf(item) - 1
    const next = nextPending(
      items.map((each) => (each.id === fresh.id ? fresh : each)),
      index,
    )
    setCurrent(next)
    focusNext.current = next
  }
  const accept = async (item: Suggestion) => {
    const fresh = await decide(
      item,
      () => api.accept(item.id),
      () => `Suggestion ${numberOf(item)}: accepted.`,
    )
    afterDecision(item, fresh)
  }
  const saveEdit = async (item: Suggestion) => {
    const text = draft.trim()
    if (!text) return
    const fresh = await decide(
      item,
      () => api.accept(item.id, text),
      (answer) => `Suggestion ${numberOf(item)}: ${answer.status === 'edited' ? 'accepted with your edit' : 'accepted'}.`,
    )
    afterDecision(item, fresh)
  }
  const reject = async (item: Suggestion) => {
    const fresh = await decide(
      item,
      () => api.reject(item.id, reason.trim() || null),
      () => `Suggestion ${numberOf(item)}: rejected.`,
    )
    afterDecision(item, fresh)
  }
  const reopen = async (ids: string[]) => {
    const reopened: Suggestion[] = []
    await act.run(async () => {
      for (const id of ids) {
        try {
          reopened.push(await api.reopen(id))
        } catch (failure) {
          if (!(failure instanceof ApiFailure && failure.code === 'not_decided')) throw failure
        }
      }
    })
    if (reopened.length === 0) return
    setItems((now) => {
      if (!now) return now
      const byId = new Map(reopened.map((each) => [each.id, each]))
      const kept = now.map((each) => byId.get(each.id) ?? each)
      // Items accepted in bulk left the pending list; reopened, they come back at the top.
      const missing = reopened.filter((each) => !now.some((shown) => shown.id === each.id))
      return [...missing, ...kept]
    })
    setOvertaken((now) => {
      const next = new Set(now)
      for (const each of reopened) next.delete(each.id)
      return next
    })
    const first = reopened[0]
    if (!first) return
    setSaid(reopened.length === 1 ? `Suggestion ${numberOf(first) || 1}: back to pending.` : `${plural(reopened.length, 'suggestion')} back to pending.`)
    focusNext.current = `suggestion-${first.id}`
  }
  const undoLast = async () => {
    const last = undo.current.pop()
    if (!last) return setSaid('Nothing to undo: you have made no decision on this page.')
    await reopen(last)
  }
  const startEdit = (item: Suggestion) => {
    setDraft(item.final_alt ?? item.proposed_alt)
    setMode({ kind: 'edit', id: item.id })
    focusNext.current = `edit-${item.id}`
  }
  const startReject = (item: Suggestion) => {
    setReason('')
    setMode({ kind: 'reject', id: item.id })
    focusNext.current = `reason-${item.id}`
  }
  const cancel = (item: Suggestion) => {
    setMode(null)
    focusNext.current = numberOf(item) - 1
  }

  const pendingShown = items?.filter((each) => each.status === 'pending') ?? []
  const acceptAll = () => {
    const ids = pendingShown.map((each) => each.id)
    setAsk({
      title: `Accept ${plural(ids.length, 'suggestion')}?`,
      body: <p>Each pending suggestion shown on this page is accepted with its proposed alt text, in your name. You can undo it with u.</p>,
      confirm: `Accept ${ids.length}`,
      run: async () => {
        const answer = await act.run(async () => {
          const merged = { accepted: [] as string[], already_decided: [] as string[], not_found: [] as string[] }
          for (let at = 0; at < ids.length; at += ACCEPT_MANY_LIMIT) {
            const part = await api.acceptMany(ids.slice(at, at + ACCEPT_MANY_LIMIT))
            merged.accepted.push(...part.accepted)
            merged.already_decided.push(...part.already_decided)
            merged.not_found.push(...part.not_found)
          }
          return merged
        })
        if (!answer) return
        if (answer.accepted.length) undo.current.push(answer.accepted)
        const others = answer.already_decided.length + answer.not_found.length
        await reload(
          `Accepted ${plural(answer.accepted.length, 'suggestion')}.${others ? ` ${plural(others, 'other')} had been decided by someone else meanwhile.` : ''}`,
        )
      },
    })
  }

  // The keys, read from a ref so the one listener always sees this render's state.
  const onKey = useRef<(event: KeyboardEvent) => void>(() => undefined)
  onKey.current = (event) => {
    const key = queueKey(event)
    if (!key || !items || ask) return
    // Undo works on an emptied list too (everything shown was accepted at once).
    if (key === 'u' && reviewer && !act.busy) {
      event.preventDefault()
      return void undoLast()
    }
    const index = Math.min(current, items.length - 1)
    const item = items[index]
    if (!item) return
    if (key === 'j' || key === 'k') {
      event.preventDefault()
      const next = key === 'j' ? Math.min(index + 1, items.length - 1) : Math.max(index - 1, 0)
      setCurrent(next)
      setMode(null)
      focusNext.current = next
      if (next === index) setSaid(key === 'j' ? 'This is the last suggestion shown.' : 'This is the first suggestion.')
      // The same render would not run the focus effect when nothing changed: focus now.
      if (next === index) document.getElementById(`suggestion-${item.id}`)?.focus()
      return
    }
    if (!reviewer || act.busy || key === 'u') return
    event.preventDefault()
    if (item.status !== 'pending')
      return setSaid(`Suggestion ${index + 1} is ${STATUS_TEXT[item.status]} already. Press u to undo your last decision, or use its Reopen button.`)
    if (key === 'a') void accept(item)
    else if (key === 'e') startEdit(item)
    else startReject(item)
  }
  useEffect(() => {
    const listener = (event: KeyboardEvent) => onKey.current(event)
    document.addEventListener('keydown', listener)
    return () => document.removeEventListener('keydown', listener)
  }, [])

  const applyFilters = (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement
    const next: QueueFilters = {
      status: field('status').value,
      mine: field('mine').checked,
      targetKind: field('target_kind').value.trim(),
      language: field('language').value.trim(),
      batch: filters.batch,
    }
    navigate(filtersPath(next))
  }
  const showMore = async () => {
    if (!cursor || !items) return
    const more = await load(cursor)
    if (!more) return
    const first = items.length
    setItems([...items, ...more])
    if (more.length) {
      setCurrent(first)
      focusNext.current = first
    }
  }

  const name = org ? orgLabel(org) : 'your account'
  return (
    <Page
      title="Review"
      loading={items === null && !list.error}
      intro={
        reviewer
          ? `Suggested alt texts of ${name} waiting for a person. Decide each with its buttons or the keys below; every decision is saved at once.`
          : `Suggested alt texts of ${name}. You are ${org ? roleName(org.role) : 'an author'} here: you see the queue, reviewers decide.`
      }
    >
      <details class="shortcuts">
        <summary>Keyboard shortcuts</summary>
        <dl>
          <div>
            <dt>
              <kbd>j</kbd> / <kbd>k</kbd>
            </dt>
            <dd>next / previous suggestion</dd>
          </div>
          {reviewer && (
            <>
              <div>
                <dt>
                  <kbd>a</kbd>
                </dt>
                <dd>accept the proposed alt text</dd>
              </div>
              <div>
                <dt>
                  <kbd>e</kbd>
                </dt>
                <dd>edit it (Enter saves, Escape cancels)</dd>
              </div>
              <div>
                <dt>
                  <kbd>r</kbd>
                </dt>
                <dd>reject it, with a reason if you like</dd>
              </div>
              <div>
                <dt>
                  <kbd>u</kbd>
                </dt>
                <dd>undo your last decision</dd>
              </div>
            </>
          )}
        </dl>
      </details>

      {/* Keyed by the query: a change of address (back, a link) shows its filters; typing is not overwritten by renders. */}
      <form key={search} class="filters" onSubmit={applyFilters} aria-label="Filters">
        <div class="grid">
          <SelectField id="filter-status" name="status" label="Status" choices={[...STATUS_CHOICES]} defaultValue={filters.status} />
          <Field id="filter-kind" name="target_kind" label="Target kind" hint="e.g. batch, file, wordpress" defaultValue={filters.targetKind} maxLength={500} />
          <Field id="filter-language" name="language" label="Language" hint="A tag such as de or pt-BR" defaultValue={filters.language} maxLength={35} />
        </div>
        <label class="check">
          <input type="checkbox" name="mine" defaultChecked={filters.mine} /> Only the ones I submitted
        </label>
        <div class="actions">
          <button type="submit" class="secondary">
            Apply the filters
          </button>
          {search && <Link href="/review">Clear the filters</Link>}
        </div>
        {filters.batch && (
          <p>
            Only the items of batch <code>{filters.batch}</code>. <Link href={filtersPath({ ...filters, batch: '' })}>Show every batch</Link>
          </p>
        )}
      </form>

      <Status message={said} />
      <ErrorMessage error={act.error} />
      <ErrorMessage error={list.error} />
      {items === null && !list.error && <p aria-busy="true">Loading the queue…</p>}
      {items?.length === 0 && <p>Nothing to review here{filters.status === 'pending' ? ': no pending suggestion matches the filters' : ''}.</p>}
      {items && items.length > 0 && (
        <>
          <p>
            {plural(items.length, 'suggestion')} shown of {total}.
            {reviewer && (
              <>
                {' '}
                <button type="button" onClick={acceptAll} disabled={pendingShown.length === 0 || act.busy}>
                  Accept all {pendingShown.length} shown
                </button>
              </>
            )}
          </p>
          <ul class="cards queue">
            {items.map((item, index) => (
              <SuggestionCard
                key={item.id}
                item={item}
                number={index + 1}
                current={index === current}
                reviewer={reviewer}
                busy={act.busy}
                overtaken={overtaken.has(item.id)}
                mode={mode?.id === item.id ? mode.kind : null}
                draft={draft}
                setDraft={setDraft}
                reason={reason}
                setReason={setReason}
                onFocus={() => setCurrent(index)}
                onAccept={() => accept(item)}
                onEdit={() => startEdit(item)}
                onSaveEdit={() => saveEdit(item)}
                onReject={() => startReject(item)}
                onSaveReject={() => reject(item)}
                onCancel={() => cancel(item)}
                onReopen={() => reopen([item.id])}
              />
            ))}
          </ul>
          {cursor && (
            <button type="button" class="secondary" onClick={showMore} disabled={list.busy}>
              Show more
            </button>
          )}
        </>
      )}
      <ConfirmDialog ask={ask} onClose={() => setAsk(null)} />
    </Page>
  )
}

type CardProps = {
  item: Suggestion
  number: number
  current: boolean
  reviewer: boolean
  busy: boolean
  overtaken: boolean
  mode: 'edit' | 'reject' | null
  draft: string
  setDraft(text: string): void
  reason: string
  setReason(text: string): void
  onFocus(): void
  onAccept(): void
  onEdit(): void
  onSaveEdit(): void
  onReject(): void
  onSaveReject(): void
  onCancel(): void
  onReopen(): void
}

function SuggestionCard(props: CardProps) {
  const { item, number } = props
  const heading = `suggestion-${item.id}-h`
  const onEscape = (event: KeyboardEvent) => {
    if (event.key !== 'Escape') return
    event.preventDefault()
    props.onCancel()
  }
  return (
    <li
      id={`suggestion-${item.id}`}
      class={props.current ? 'card suggestion current' : 'card suggestion'}
      tabIndex={-1}
      aria-labelledby={heading}
      aria-current={props.current ? 'true' : undefined}
      onFocusIn={props.onFocus}
      data-status={item.status}
    >
      <h2 class="card-title" id={heading}>
        Suggestion {number}: <span class="status-word">{STATUS_TEXT[item.status]}</span>
      </h2>
      <div class="suggestion-body">
        <Thumbnail item={item} />
        <dl class="facts target">
          <div>
            <dt>Target</dt>
            <dd>
              {item.target.kind}: {item.target.ref}
            </dd>
          </div>
          {item.target.site && (
            <div>
              <dt>Site</dt>
              <dd>{item.target.site}</dd>
            </div>
          )}
          <div>
            <dt>Language</dt>
            <dd>{item.language}</dd>
          </div>
          <div>
            <dt>Submitted</dt>
            <dd>
              <time dateTime={item.created_at}>{formatDateTime(item.created_at)}</time>
              {item.created_by ? ` by ${item.created_by}` : ''}
            </dd>
          </div>
        </dl>
      </div>
      <div class="compare">
        <div>
          <h3>Current alt text</h3>
          {item.current_alt ? <blockquote class="alt">{item.current_alt}</blockquote> : <p class="muted">None</p>}
        </div>
        <div>
          <h3>Proposed alt text</h3>
          {item.decorative && item.proposed_alt === '' ? (
            <p>
              <strong>Decorative</strong>: empty alt text.
            </p>
          ) : (
            <blockquote class="alt">{item.proposed_alt}</blockquote>
          )}
        </div>
      </div>
      {item.wcag_issues.length > 0 ? (
        <>
          <h3>WCAG issues</h3>
          <ul class="issues">
            {item.wcag_issues.map((issue) => (
              <li key={issue}>{issue}</li>
            ))}
          </ul>
        </>
      ) : (
        item.wcag_compliant && <p>The proposed alt text passes the WCAG checks.</p>
      )}
      {item.verdict?.verdict && (
        <p class="verdict">
          <strong>Judge:</strong> {VERDICT_TEXT[item.verdict.verdict] ?? item.verdict.verdict}
          {item.verdict.reasons ? `: ${item.verdict.reasons}` : '.'}
        </p>
      )}
      {item.status !== 'pending' && (
        <p class="decision">
          {item.status === 'rejected' ? 'Rejected' : 'Decided'}
          {item.decided_by ? ` by ${item.decided_by}` : ''}
          {item.decided_at && (
            <>
              {' '}
              on <time dateTime={item.decided_at}>{formatDateTime(item.decided_at)}</time>
            </>
          )}
          {item.final_alt !== null && item.status === 'edited' && <>, as “{item.final_alt}”</>}
          {item.reason && <>, because: {item.reason}</>}.{props.overtaken && <strong> Someone else decided this meanwhile.</strong>}
        </p>
      )}
      {props.reviewer && props.mode === 'edit' && (
        <form
          onSubmit={(event) => {
            event.preventDefault()
            props.onSaveEdit()
          }}
        >
          <div class="field">
            <label for={`edit-${item.id}`}>Alt text for suggestion {number}</label>
            <p class="hint" id={`edit-${item.id}-hint`}>
              Enter saves and accepts it; Shift+Enter starts a new line; Escape cancels.
            </p>
            <textarea
              id={`edit-${item.id}`}
              aria-describedby={`edit-${item.id}-hint`}
              value={props.draft}
              rows={3}
              maxLength={2000}
              required
              onInput={(event) => props.setDraft(event.currentTarget.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && (event.ctrlKey || event.metaKey || !event.shiftKey)) {
                  event.preventDefault()
                  props.onSaveEdit()
                } else onEscape(event)
              }}
            />
          </div>
          <div class="actions">
            <button type="submit" disabled={props.busy}>
              Save and accept
            </button>
            <button type="button" class="secondary" onClick={props.onCancel}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {props.reviewer && props.mode === 'reject' && (
        <form
          onSubmit={(event) => {
            event.preventDefault()
            props.onSaveReject()
          }}
        >
          <Field
            id={`reason-${item.id}`}
            label={`Why reject suggestion ${number}? (optional)`}
            value={props.reason}
            maxLength={1000}
            autocomplete="off"
            onInput={(event: Event) => props.setReason((event.currentTarget as HTMLInputElement).value)}
            onKeyDown={onEscape}
          />
          <div class="actions">
            <button type="submit" class="danger" disabled={props.busy}>
              Reject
            </button>
            <button type="button" class="secondary" onClick={props.onCancel}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {props.reviewer && props.mode === null && (
        <div class="actions">
          {item.status === 'pending' ? (
            <>
              <Decide label="Accept" number={number} keys="a" primary busy={props.busy} onClick={props.onAccept} />
              <Decide label="Edit" number={number} keys="e" busy={props.busy} onClick={props.onEdit} />
              <Decide label="Reject" number={number} keys="r" busy={props.busy} onClick={props.onReject} />
            </>
          ) : (
            <Decide label="Reopen" number={number} busy={props.busy} onClick={props.onReopen} />
          )}
        </div>
      )}
    </li>
  )
}

/** One decision's button: named with the item's number, its key announced where it has one. */
function Decide(props: { label: string; number: number | string; keys?: string; primary?: boolean; busy: boolean; onClick: () => void }) {
  return (
    <button
      type="button"
      class={props.primary ? undefined : 'secondary'}
      onClick={props.onClick}
      disabled={props.busy}
      aria-label={`${props.label} suggestion ${props.number}`}
      aria-keyshortcuts={props.keys}
    >
      {props.label}
    </button>
  )
}

/**
 * The image, fetched with the organisation header (an <img src> could not send it) as an object URL.
 * Its alt is a neutral label, not an alt text: the current and proposed texts are read right after it,
 * and repeating either as the image's name would make a screen reader say it twice, as if it were right.
 */
function Thumbnail(props: { item: Suggestion }) {
  const { item } = props
  const [url, setUrl] = useState<string | null>(null)
  useEffect(() => {
    if (!item.image.thumbnail_url) return
    let live = true
    let made: string | null = null
    api.thumbnail(item.id).then(
      (objectUrl) => {
        made = objectUrl
        if (live) setUrl(objectUrl)
        else URL.revokeObjectURL(objectUrl)
      },
      () => undefined,
    )
    return () => {
      live = false
      if (made) URL.revokeObjectURL(made)
    }
  }, [item.id, item.image.thumbnail_url])
  const size = item.image.width && item.image.height ? `, ${item.image.width} × ${item.image.height} px` : ''
  const label = `The image under review${item.image.format ? ` (${item.image.format.toUpperCase()}${size})` : ''}`
  if (!item.image.thumbnail_url) return <p class="thumb muted">No preview of the image.</p>
  return <div class="thumb">{url ? <img src={url} alt={label} /> : <p class="muted">Loading the preview…</p>}</div>
}
