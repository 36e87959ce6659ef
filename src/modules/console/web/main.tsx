import { render } from 'preact'
import { Console } from './app'

render(<Console />, document.getElementById('console')!)
