// Building blocks every page uses: the page heading that takes focus after a navigation, labelled fields,
// live regions for errors and results, copy buttons, the once-only key panel and the confirm dialog.
import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes } from 'preact'
import { createContext } from 'preact'
import { useContext, useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, type ModelState, type Org, type Session, SIGNED_OUT_CODES } from './api'
import { explain } from './errors'
import { followLink } from './router'

export type AppState = {
  session: Session | null
  /** Navigations since the page loaded: the heading of a page reached by one takes the focus. */
  moves: number
  signedIn(session: Session): void
  /** Forget the session (ended, expired, signed out) and go to the sign-in page with this notice. */
  signedOut(notice: string): void
  /** Forget the session without leaving the page (a password reset ended it). */
  forget(): void
  /** A one-time message for the next page (shown at its top, then forgotten). */
  notice: string
  setNotice(notice: string): void
  /** The page has what it needs to show: the console becomes visible (it stays hidden until the first one). */
  shown(): void
  /** The organisation the console acts in (null: the service has no organisations to offer), and all of the person's. */
  org: Org | null
  orgs: Org[]
  /** Acts in another organisation from now on (remembered in this browser); the page loads its data again. */
  switchOrg(id: string, notice?: string): void
  /** Reads the person's organisations again (one was made, joined or left); resolves to them. */
  reloadOrgs(): Promise<Org[]>
}

export const App = createContext<AppState>(null as unknown as AppState)
export const useApp = () => useContext(App)

/**
 * A page: its heading (focused after a navigation), the notice left for it, its intro. `loading` is true
 * while the data it shows first is on its way; the first page of a visit appears only when it is false,
 * so nothing on the screen moves as data arrives.
 */
export function Page(props: { title: string; intro?: ComponentChildren; loading?: boolean; children: ComponentChildren }) {
  const { moves, notice, setNotice, shown } = useApp()
  const heading = useRef<HTMLHeadingElement>(null)
  const [shownNotice] = useState(notice)
  // A layout effect: the heading has the focus as the page shows, so a key pressed at once starts there.
  useLayoutEffect(() => {
    document.title = `${props.title} · alttext`
    if (moves > 0) heading.current?.focus()
    if (notice) setNotice('')
  }, [props.title])
  useEffect(() => {
    if (!props.loading) shown()
  }, [props.loading])
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        {props.title}
      </h1>
      {shownNotice && (
        <p class="notice" role="status">
          {shownNotice}
        </p>
      )}
      {props.intro && <p class="intro">{props.intro}</p>}
      {props.children}
    </>
  )
}

export function Link(props: { href: string; children: ComponentChildren; current?: boolean; class?: string }) {
  return (
    <a href={props.href} onClick={followLink} aria-current={props.current ? 'page' : undefined} class={props.class}>
      {props.children}
    </a>
  )
}

const hintIdOf = (id: string, hint: ComponentChildren) => (hint ? `${id}-hint` : undefined)

/** A control with its label and hint; the control names the hint in aria-describedby (hintIdOf), so it is read with it. */
function Labelled(props: { id: string; label: ComponentChildren; hint?: ComponentChildren; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.hint && (
        <p class="hint" id={hintIdOf(props.id, props.hint)}>
          {props.hint}
        </p>
      )}
      {props.children}
    </div>
  )
}

type InputProps = InputHTMLAttributes<HTMLInputElement> & { label: ComponentChildren; hint?: ComponentChildren; id: string }

export function Field({ label, hint, id, ...input }: InputProps) {
  return (
    <Labelled id={id} label={label} hint={hint}>
      <input id={id} aria-describedby={hintIdOf(id, hint)} {...input} />
    </Labelled>
  )
}

type SelectProps = SelectHTMLAttributes<HTMLSelectElement> & {
  label: ComponentChildren
  hint?: ComponentChildren
  id: string
  choices: { value: string | number; text: ComponentChildren }[]
}

/** A labelled choice among `choices`, as Field is for an input. */
export function SelectField({ label, hint, id, choices, ...select }: SelectProps) {
  return (
    <Labelled id={id} label={label} hint={hint}>
      <select id={id} aria-describedby={hintIdOf(id, hint)} {...select}>
        {choices.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.text}
          </option>
        ))}
      </select>
    </Labelled>
  )
}

/**
 * Says when the model cannot describe images now (GET /ready), so that a failure is expected rather than a
 * surprise. The status region is always in the page; it is empty while the model is well or unknown.
 */
export function ModelStatus() {
  // null until the service answered (or could not: the page's own calls say that the service is out of reach).
  const [state, setState] = useState<ModelState | null>(null)
  useEffect(() => {
    let live = true
    api.modelState().then(
      (answer) => live && setState(answer),
      () => undefined,
    )
    return () => {
      live = false
    }
  }, [])
  const down = state && !state.ok ? state.detail : null
  return (
    <div role="status" class={down ? 'model-status warning' : 'model-status'} data-model={state === null ? undefined : state.ok ? 'ready' : 'down'}>
      {down && (
        <p>
          <strong>The model is not available right now</strong> ({down}). Alt text cannot be made until it is back; a request that fails costs no credit.
        </p>
      )}
    </div>
  )
}

/** An error in words, announced as it appears. The region is always in the page so the news is read. */
export function ErrorMessage(props: { error: unknown }) {
  const explained = props.error ? explain(props.error) : null
  return (
    <div role="alert" class={explained ? 'error' : 'error empty'}>
      {explained && (
        <>
          <p>{explained.sentence}</p>
          {explained.detail && <p class="detail">{explained.detail}</p>}
        </>
      )}
    </div>
  )
}

/** A short result or confirmation, read out politely. */
export function Status(props: { message: ComponentChildren; class?: string }) {
  return (
    <p role="status" class={props.message ? (props.class ?? 'status') : 'status empty'}>
      {props.message}
    </p>
  )
}

async function copyText(text: string, fallbackField: HTMLInputElement | HTMLTextAreaElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    // No clipboard API (a plain-http address that is not this machine): select the text instead.
    fallbackField?.focus()
    fallbackField?.select()
    return document.execCommand?.('copy') ?? false
  }
}

export function CopyButton(props: { text: string; label: string; field?: string }) {
  const [said, setSaid] = useState('')
  const copy = async () => {
    const field = props.field ? (document.getElementById(props.field) as HTMLInputElement | null) : null
    setSaid((await copyText(props.text, field)) ? 'Copied.' : 'Selected: press Ctrl+C (or ⌘C) to copy.')
  }
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={copy}>
        {props.label}
      </button>
      <span role="status" class="copy-said">
        {said}
      </span>
    </span>
  )
}

/**
 * The panel goes away with the button that was pressed: the page heading takes the focus first, so it does
 * not fall to <body> (a screen reader would start again at the top, a keyboard user would lose the place).
 */
function done(onDone: () => void) {
  document.querySelector<HTMLElement>('main h1')?.focus()
  onDone()
}

/** A key shown once: read-only field, copy button, and the warning that it will not be shown again. */
export function OnceKey(props: { apiKey: string; title: string; children?: ComponentChildren; onDone?: () => void; doneLabel?: string }) {
  const id = useId()
  const heading = useRef<HTMLHeadingElement>(null)
  const onDone = props.onDone
  useLayoutEffect(() => heading.current?.focus(), [props.apiKey])
  return (
    <section class="once-key" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`} ref={heading} tabIndex={-1}>
        {props.title}
      </h2>
      <p class="warning">
        <strong>Copy it now: you won't see it again.</strong> The service keeps only a hash of the key, so nobody can show it to you later.
      </p>
      {props.children}
      <div class="field">
        <label for={`${id}-key`}>API key</label>
        <input id={`${id}-key`} class="key" readOnly value={props.apiKey} spellcheck={false} autocomplete="off" onFocus={(e) => e.currentTarget.select()} />
      </div>
      <div class="actions">
        <CopyButton text={props.apiKey} label="Copy the key" field={`${id}-key`} />
        {onDone && (
          <button type="button" onClick={() => done(onDone)}>
            {props.doneLabel ?? 'I have saved it'}
          </button>
        )}
      </div>
    </section>
  )
}

export type Confirmation = { title: string; body: ComponentChildren; confirm: string; danger?: boolean; run: () => Promise<void> | void }

/** A modal confirm dialog (the browser's own <dialog>: focus stays inside, Escape cancels). */
export function ConfirmDialog(props: { ask: Confirmation | null; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const id = useId()
  const returnTo = useRef<Element | null>(null)
  useEffect(() => {
    const element = dialog.current
    if (!element) return
    if (props.ask && !element.open) {
      returnTo.current = document.activeElement
      element.showModal()
    } else if (!props.ask && element.open) element.close()
  }, [props.ask])
  const close = () => {
    props.onClose()
    const target = returnTo.current
    if (target instanceof HTMLElement && target.isConnected) target.focus()
  }
  const confirm = async () => {
    const ask = props.ask
    close()
    await ask?.run()
  }
  return (
    <dialog
      ref={dialog}
      aria-labelledby={`${id}-t`}
      aria-describedby={`${id}-b`}
      onCancel={(e) => {
        e.preventDefault()
        close()
      }}
    >
      {props.ask && (
        <>
          <h2 id={`${id}-t`}>{props.ask.title}</h2>
          <div id={`${id}-b`}>{props.ask.body}</div>
          <div class="actions">
            <button type="button" class="secondary" onClick={close}>
              Cancel
            </button>
            <button type="button" class={props.ask.danger ? 'danger' : undefined} onClick={confirm}>
              {props.ask.confirm}
            </button>
          </div>
        </>
      )}
    </dialog>
  )
}

/** Runs an API call for a form: busy while it runs, its error kept for <ErrorMessage>. */
export function useAction() {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const { signedOut } = useApp()
  const run = async <T,>(work: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true)
    setError(null)
    try {
      return await work()
    } catch (failure) {
      if (isSignedOut(failure)) signedOut('Your session has ended. Sign in again.')
      else setError(failure)
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, setError, run }
}

export function isSignedOut(failure: unknown): boolean {
  const { status, code } = (failure ?? {}) as { status?: number; code?: string }
  return status === 401 && code !== undefined && SIGNED_OUT_CODES.has(code)
}
