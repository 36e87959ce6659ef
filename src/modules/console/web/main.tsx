import { render } from 'preact'
import { Console } from './app'

// `/console/#/invitation?token=…` (the invitation mail's link) is the page `/invitation?token=…`.
if (location.hash.startsWith('#/')) history.replaceState(null, '', location.hash.slice(1))

render(<Console />, document.getElementById('console')!)
