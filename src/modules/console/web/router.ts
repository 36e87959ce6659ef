// Path routing in the page: links change the address with the History API and the app renders the page
// for the new path; the server answers every console path with the same HTML, so a reload works too.
import { useEffect, useState } from 'preact/hooks'

const CHANGE = 'console:navigate'

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', path)
  else history.pushState(null, '', path)
  dispatchEvent(new Event(CHANGE))
}

/** The current path, and how many navigations happened since the page loaded (0: the first render). */
export function useLocation(): { path: string; moves: number } {
  const [state, setState] = useState({ path: location.pathname, moves: 0 })
  useEffect(() => {
    const update = () => setState((previous) => ({ path: location.pathname, moves: previous.moves + 1 }))
    addEventListener('popstate', update)
    addEventListener(CHANGE, update)
    return () => {
      removeEventListener('popstate', update)
      removeEventListener(CHANGE, update)
    }
  }, [])
  return state
}

/** A click on an in-app link that the app handles itself (not one meant for a new tab or window). */
export function followLink(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  if (anchor.origin !== location.origin) return
  event.preventDefault()
  navigate(anchor.pathname + anchor.search)
}
