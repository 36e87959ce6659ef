// Which Chromium --render runs, and how it is started: ALTTEXT_CHROMIUM, else a Chromium or Chrome on the
// PATH, else the usual install places. Chromium's own network stack is pointed at a sink that closes every
// connection: the pages' requests are all sent by gate.ts, so whatever Chromium would open by itself (a
// preconnect, WebRTC, a prefetch) goes nowhere.
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'
import type { Browser } from 'playwright-core'
import type { Env } from '../../../config'
import { UsageError } from '../../shared/args'

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome']
const INSTALL_PLACES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/snap/bin/chromium',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
]

export const INSTALL_HINT =
  'install Chromium (Debian/Ubuntu: apt install chromium; macOS: brew install --cask chromium) or set ALTTEXT_CHROMIUM to a Chromium or Chrome executable'

const isExecutable = (path: string) => {
  try {
    if (!statSync(path).isFile()) return false
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The Chromium to run; a UsageError saying how to get one when there is none. `places`: where else to look. */
export function findChromium(env: Env, places: string[] = INSTALL_PLACES): string {
  const given = env.ALTTEXT_CHROMIUM?.trim()
  if (given) {
    if (!isAbsolute(given)) throw new UsageError(`ALTTEXT_CHROMIUM must be an absolute path to a Chromium or Chrome executable, got "${given}"`)
    if (!isExecutable(given)) throw new UsageError(`ALTTEXT_CHROMIUM is "${given}", which is not an executable file; ${INSTALL_HINT}`)
    return given
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue
    for (const name of NAMES) if (isExecutable(join(dir, name))) return join(dir, name)
  }
  const found = places.find(isExecutable)
  if (found) return found
  throw new UsageError(`--render needs Chromium, and none was found (ALTTEXT_CHROMIUM unset, none on the PATH): ${INSTALL_HINT}`)
}

/** The flags Chromium is started with: headless, no background services, its own connections to `sinkPort` only. */
export function chromiumArgs(sinkPort: number): string[] {
  return [
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--disable-extensions',
    '--mute-audio',
    '--deny-permission-prompts',
    `--proxy-server=http://127.0.0.1:${sinkPort}`,
    // Loopback too: only requests handed back by the route reach a page.
    '--proxy-bypass-list=<-loopback>',
    // WebRTC would send UDP around the proxy.
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ]
}

/** A loopback listener that closes every connection at once, counting them. */
export function connectionSink(): { port: number; connections(): number; stop(): void } {
  let connections = 0
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        connections++
        socket.end()
      },
      data() {},
    },
  })
  return { port: listener.port, connections: () => connections, stop: () => listener.stop(true) }
}

/** Starts Chromium at `executable`; a UsageError when it does not start. */
export async function launchChromium(executable: string, sinkPort: number): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  const root = process.getuid?.() === 0
  try {
    return await chromium.launch({
      executablePath: executable,
      headless: true,
      // Chromium's sandbox cannot run as root.
      chromiumSandbox: !root,
      args: chromiumArgs(sinkPort),
      // The run owns Ctrl-C and closes the browser itself.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: 30_000,
    })
  } catch (error) {
    const first = (error as Error).message.split('\n').find((line) => line.trim() !== '') ?? String(error)
    throw new UsageError(`cannot start Chromium at ${executable}: ${first.trim()}; ${INSTALL_HINT}`)
  }
}
