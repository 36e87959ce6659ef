// The organisation switcher of the header: which organisation the console acts in and the person's role
// there, the others to switch to, and a form for a new one. A disclosure (a button and the panel it
// opens), not a <select> that acts as it changes: arrow keys on a closed select would reload the page.
import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, type Org, type Role } from './api'
import { ErrorMessage, Field, useAction, useApp } from './components'
import { navigate } from './router'

/** How an organisation is named to the person: its name, or "Personal" for their own. */
export const orgLabel = (org: { name: string | null; personal?: boolean }) => (org.personal || !org.name ? 'Personal' : org.name)

const ROLE_NAMES: Record<Role, string> = { owner: 'an owner', admin: 'an admin', reviewer: 'a reviewer', author: 'an author' }
/** "an admin", for sentences. */
export const roleName = (role: Role) => ROLE_NAMES[role] ?? role

export function OrgSwitcher() {
  const { org, orgs, switchOrg } = useApp()
  const [open, setOpen] = useState(false)
  const id = useId()
  const toggle = useRef<HTMLButtonElement>(null)
  const panel = useRef<HTMLDivElement>(null)
  // A layout effect: the listeners are in place before the next key or click is handled (a deferred effect
  // missed an Escape pressed right after Enter opened the panel).
  useLayoutEffect(() => {
    if (!open) return
    // A click elsewhere closes the panel, as a menu would.
    const outside = (event: MouseEvent) => {
      if (!panel.current?.parentElement?.contains(event.target as Node)) setOpen(false)
    }
    // Escape closes it and gives the focus back to its button, as the compact menu does.
    const onEscape = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || document.querySelector('dialog[open]')) return
      setOpen(false)
      toggle.current?.focus()
    }
    document.addEventListener('click', outside)
    document.addEventListener('keydown', onEscape)
    return () => {
      document.removeEventListener('click', outside)
      document.removeEventListener('keydown', onEscape)
    }
  }, [open])
  if (!org) return null
  return (
    <div class="org-switcher">
      <button ref={toggle} type="button" class="secondary small org-toggle" aria-expanded={open} aria-controls={`${id}-panel`} onClick={() => setOpen(!open)}>
        <span class="visually-hidden">Organisation: </span>
        <span class="org-name">{orgLabel(org)}</span> <span class="org-role">({org.role})</span>
      </button>
      <div id={`${id}-panel`} ref={panel} class="org-panel" hidden={!open}>
        {open && (
          <>
            <h2 class="org-panel-title" id={`${id}-t`}>
              Your organisations
            </h2>
            <ul aria-labelledby={`${id}-t`}>
              {orgs.map((each) => (
                <li key={each.id}>
                  <button
                    type="button"
                    class={each.id === org.id ? 'org-choice current' : 'org-choice secondary'}
                    aria-current={each.id === org.id ? 'true' : undefined}
                    onClick={() => {
                      setOpen(false)
                      if (each.id !== org.id) switchOrg(each.id)
                      else toggle.current?.focus()
                    }}
                  >
                    {orgLabel(each)} <span class="org-role">({each.role})</span>
                  </button>
                </li>
              ))}
            </ul>
            <NewOrgForm idPrefix={`${id}-new`} onCreated={() => setOpen(false)} />
          </>
        )}
      </div>
    </div>
  )
}

/** Makes an organisation (the person its owner), switches to it and opens its Members page to invite people. */
export function NewOrgForm(props: { idPrefix: string; onCreated?: (org: Org) => void }) {
  const { reloadOrgs, switchOrg } = useApp()
  const create = useAction()
  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const name = (form.elements.namedItem('org_name') as HTMLInputElement).value.trim()
    const created = await create.run(() => api.createOrg(name))
    if (!created) return
    form.reset()
    await reloadOrgs()
    props.onCreated?.(created)
    navigate('/members')
    switchOrg(created.id, `Created ${orgLabel(created)}. The console now works in it, where you are its owner: invite people below.`)
  }
  return (
    <form class="narrow new-org" onSubmit={submit} aria-labelledby={`${props.idPrefix}-h`}>
      <h3 id={`${props.idPrefix}-h`}>New organisation</h3>
      <Field
        id={`${props.idPrefix}-name`}
        name="org_name"
        label="Name"
        hint="It starts on the free plan, with you as its owner."
        required
        maxLength={100}
        autocomplete="organization"
      />
      <ErrorMessage error={create.error} />
      <button type="submit" disabled={create.busy}>
        {create.busy ? 'Creating…' : 'Create the organisation'}
      </button>
    </form>
  )
}
