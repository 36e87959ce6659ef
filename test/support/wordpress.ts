// A real WordPress 6.4 on loopback for the plugin's tests: WordPress's PHP from the npm package
// @wp-playground/wordpress-builds (its build carries no database server: the SQLite Database Integration
// drop-in stands in for MySQL), served by Debian's `php -S`, installed non-interactively with a fresh
// database, an admin with an application password, and the plugin in integrations/wordpress/alttext
// activated. HTTPS in front (a TLS-terminating TCP proxy in this process): the service sends webhooks to
// https only. Start it once per test file (it takes a second or two) and stop it in afterAll.
//
// Where the package comes from: `npm pack` into a per-user cache (XDG_CACHE_HOME or ~/.cache), checked
// against the registry's pinned sha512, unpacked there once. Not a devDependency: it is 158 MB that every
// `bun install` would fetch and unpack for the few test files that need it.
import { createHash, randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Socket, Subprocess, TCPSocketListener } from 'bun'
import { generate } from 'selfsigned'

export const WORDPRESS_BUILDS = '@wp-playground/wordpress-builds@0.9.19'
const WORDPRESS_BUILDS_SHA512 = 'dlqvh/MJDpE5W68vgPPKUjpip6zMuBh59L3D18ZX+pdwurC4q4ydrTww/3sTMV69BBcoH6kF93YtAtujNC5Mpw=='
const WORDPRESS_VERSION = '6.4'
const REPO_ROOT = resolve(import.meta.dir, '..', '..')
export const PLUGIN_DIR = join(REPO_ROOT, 'integrations', 'wordpress', 'alttext')

export const ADMIN = { login: 'admin', password: 'admin-password-for-tests', email: 'admin@example.com' }

export type WpUser = { id: number; login: string; password: string; appPassword: string }

export type WpResponse<T = any> = { status: number; body: T; text: string; headers: Headers }

export type RestInit = {
  method?: string
  /** Sent as JSON. */
  json?: unknown
  body?: RequestInit['body']
  headers?: Record<string, string>
  /** Whose application password signs the request (the admin's by default); null: no credentials. */
  as?: WpUser | null
}

export type WordPress = {
  /** https://127.0.0.1:PORT, WordPress's home and site URL. */
  url: string
  /** The document root (WordPress's ABSPATH). */
  root: string
  /** PEM file of the certificate the TLS proxy shows: give it to the service as NODE_EXTRA_CA_CERTS. */
  caPath: string
  caPem: string
  admin: WpUser
  /** A REST request, `path` after /wp-json (e.g. '/alttext/v1/status'), with an application password. */
  rest<T = any>(path: string, init?: RestInit): Promise<WpResponse<T>>
  /** Any request to the site (path with a leading slash), through the TLS proxy. */
  request(path: string, init?: RequestInit): Promise<Response>
  /** Runs PHP code (no `<?php`) inside WordPress (a CLI script that loads wp-load.php); returns its stdout. */
  wp(php: string): Promise<string>
  /** Sets WordPress options (update_option for each), as the settings screen would. */
  setOptions(options: Record<string, string>): Promise<void>
  /** Runs PHP code that `return`s a value, and gives it back decoded from JSON. */
  wpJson<T = any>(php: string): Promise<T>
  /** A new user of `role` with an application password. */
  user(role: 'administrator' | 'editor' | 'author' | 'contributor' | 'subscriber'): Promise<WpUser>
  /** Uploads a file through /wp/v2/media (the way the block editor does) and returns the attachment id. */
  upload(bytes: Uint8Array, filename: string, contentType: string, as?: WpUser): Promise<{ status: number; id: number; body: any }>
  /** Runs WP-Cron in the web server (GET /wp-cron.php), as a visit would; resolves when the request ends. */
  cron(): Promise<number>
  /** SIGKILLs the PHP web server (and its workers): WordPress dies mid-request, as on a crash. */
  kill(): void
  /** Starts the PHP web server again on the same port (same files, same database). */
  restart(): Promise<void>
  /** What PHP wrote to its error log and stderr so far. */
  phpLog(): string
  stop(): Promise<void>
}

const cacheRoot = () => join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'alttext-tests')

/** The unpacked package's WordPress, once per machine: downloads and unpacks only when the cache lacks it. */
async function preparedBuild(): Promise<string> {
  const root = cacheRoot()
  const ready = join(root, `wordpress-${WORDPRESS_VERSION}-builds-0.9.19`)
  if (existsSync(join(ready, '.complete'))) return ready
  mkdirSync(root, { recursive: true })
  const tgz = join(root, 'wp-playground-wordpress-builds-0.9.19.tgz')
  if (!existsSync(tgz) || sha512(tgz) !== WORDPRESS_BUILDS_SHA512) {
    await run(['npm', 'pack', '--silent', WORDPRESS_BUILDS, '--pack-destination', root], root)
  }
  if (sha512(tgz) !== WORDPRESS_BUILDS_SHA512) throw new Error(`${tgz} is not ${WORDPRESS_BUILDS} (sha512 differs)`)
  // Unpacked beside and renamed into place, so two test files starting at once never see half a tree.
  const staging = mkdtempSync(join(root, 'staging-'))
  try {
    const pkg = join(staging, 'package')
    await run(
      [
        'tar',
        'xzf',
        tgz,
        `package/public/wp-${WORDPRESS_VERSION}`,
        `package/src/wordpress/wp-${WORDPRESS_VERSION}.zip`,
        'package/src/sqlite-database-integration',
      ],
      staging,
    )
    const tree = join(staging, 'wordpress')
    // The zip holds the PHP (and Playground's wp-config.php and database, both replaced below); public/
    // the static files (CSS, JS, images) the zip leaves out.
    await run(['unzip', '-q', join(pkg, 'src', 'wordpress', `wp-${WORDPRESS_VERSION}.zip`), '-d', tree], staging)
    cpSync(join(pkg, 'public', `wp-${WORDPRESS_VERSION}`), tree, { recursive: true, force: false, errorOnExist: false })
    const plugins = join(tree, 'wp-content', 'plugins')
    rmSync(join(plugins, 'sqlite-database-integration'), { recursive: true, force: true })
    await run(['unzip', '-q', join(pkg, 'src', 'sqlite-database-integration', 'sqlite-database-integration.zip'), '-d', plugins], staging)
    renameSync(join(plugins, 'sqlite-database-integration-main'), join(plugins, 'sqlite-database-integration'))
    // The drop-in finds the plugin by its folder next to it.
    cpSync(join(plugins, 'sqlite-database-integration', 'db.copy'), join(tree, 'wp-content', 'db.php'))
    rmSync(join(tree, 'wp-content', 'database', '.ht.sqlite'), { force: true })
    rmSync(join(tree, 'wp-config.php'), { force: true })
    writeFileSync(join(tree, '.complete'), `${WORDPRESS_BUILDS}\n`)
    rmSync(ready, { recursive: true, force: true })
    renameSync(tree, ready)
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  return ready
}

function sha512(file: string): string {
  return createHash('sha512').update(readFileSync(file)).digest('base64')
}

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}: ${err || out}`)
  return out
}

async function certificate(): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 60 * 60 * 1000),
    notAfterDate: new Date(Date.now() + 24 * 60 * 60 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  } as Parameters<typeof generate>[1])
  return { cert: pems.cert, key: pems.private }
}

/** A free loopback port, for php -S (which cannot report the port it got for :0). */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

type ProxySide = { peer: Socket<ProxySide> | null; pending: Uint8Array[]; ending: boolean }

/** TLS on an ephemeral port in front of plain HTTP on `upstreamPort`, byte for byte. */
function tlsProxy(tls: { cert: string; key: string }, upstreamPort: () => number): TCPSocketListener<ProxySide> {
  // Bun reuses the buffers it hands to `data`: whatever waits for a drain is a copy.
  const send = (socket: Socket<ProxySide>, data: Uint8Array) => {
    if (socket.data.pending.length > 0) {
      socket.data.pending.push(data.slice())
      return
    }
    const written = socket.write(data)
    if (written < data.byteLength) socket.data.pending.push(data.slice(Math.max(0, written)))
  }
  const drain = (socket: Socket<ProxySide>) => {
    while (socket.data.pending.length > 0) {
      const next = socket.data.pending[0]!
      const written = socket.write(next)
      if (written < next.byteLength) {
        socket.data.pending[0] = next.subarray(Math.max(0, written))
        return
      }
      socket.data.pending.shift()
    }
    if (socket.data.ending) socket.end()
  }
  /** Ends `socket` once what waits for it is written. */
  const endAfterPending = (socket: Socket<ProxySide> | null) => {
    if (!socket) return
    socket.data.ending = true
    if (socket.data.pending.length === 0) socket.end()
  }
  const upstreamHandlers = {
    data: (socket: Socket<ProxySide>, data: Uint8Array) => {
      if (socket.data.peer) send(socket.data.peer, data)
    },
    drain,
    close: (socket: Socket<ProxySide>) => endAfterPending(socket.data.peer),
    error: (socket: Socket<ProxySide>) => endAfterPending(socket.data.peer),
  }
  return Bun.listen<ProxySide>({
    hostname: '127.0.0.1',
    port: 0,
    tls,
    socket: {
      open(client) {
        client.data = { peer: null, pending: [], ending: false }
        const early: Uint8Array[] = []
        ;(client.data as ProxySide & { early?: Uint8Array[] }).early = early
        Bun.connect<ProxySide>({ hostname: '127.0.0.1', port: upstreamPort(), data: { peer: client, pending: [], ending: false }, socket: upstreamHandlers })
          .then((upstream) => {
            client.data.peer = upstream
            for (const chunk of early.splice(0)) send(upstream, chunk)
          })
          .catch(() => client.end())
      },
      data(client, data) {
        if (client.data.peer) send(client.data.peer, data)
        else (client.data as ProxySide & { early?: Uint8Array[] }).early?.push(data.slice())
      },
      drain,
      close: (client) => endAfterPending(client.data.peer),
      error: (client) => endAfterPending(client.data.peer),
    },
  })
}

const phpString = (value: string) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

export type WordPressOptions = {
  /** Extra `define()`s for wp-config.php (ALTTEXT_API_KEY, say). */
  constants?: Record<string, string | boolean | number>
  /** Activate integrations/wordpress/alttext (default true). */
  activatePlugin?: boolean
  /** Options set right after install (alttext_service_url, …). */
  options?: Record<string, unknown>
}

export async function startWordPress(options: WordPressOptions = {}): Promise<WordPress> {
  const build = await preparedBuild()
  const dir = mkdtempSync(join(tmpdir(), 'alttext-wp-'))
  const root = join(dir, 'wordpress')
  cpSync(build, root, { recursive: true })
  // A link, not a copy: a test sees the plugin's files as they are in the checkout.
  if (existsSync(PLUGIN_DIR)) symlinkSync(PLUGIN_DIR, join(root, 'wp-content', 'plugins', 'alttext'))
  const tls = await certificate()
  const caPath = join(dir, 'ca.pem')
  writeFileSync(caPath, tls.cert)
  const phpPort = freePort()
  const proxy = tlsProxy(tls, () => phpPort)
  const url = `https://127.0.0.1:${proxy.port}`
  const errorLog = join(dir, 'php-errors.log')
  const salts = ['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT']
  const constants: Record<string, string | boolean | number> = {
    DB_NAME: 'wordpress',
    DB_USER: '',
    DB_PASSWORD: '',
    DB_HOST: 'localhost',
    DB_CHARSET: 'utf8',
    DB_COLLATE: '',
    DB_DIR: `${join(dir, 'database')}/`,
    DB_FILE: '.ht.sqlite',
    WP_HOME: url,
    WP_SITEURL: url,
    // 'local' lets application passwords work without a real certificate check on WordPress's side.
    WP_ENVIRONMENT_TYPE: 'local',
    // Cron runs when a test asks (wp.cron()), not on a visit: a test decides when background work happens.
    DISABLE_WP_CRON: true,
    WP_DEBUG: true,
    WP_DEBUG_LOG: errorLog,
    WP_DEBUG_DISPLAY: false,
    AUTOMATIC_UPDATER_DISABLED: true,
    WP_HTTP_BLOCK_EXTERNAL: true,
    // The service and WordPress itself, on loopback: everything else is blocked.
    WP_ACCESSIBLE_HOSTS: '127.0.0.1,localhost',
    ...Object.fromEntries(salts.map((name) => [name, randomBytes(32).toString('hex')])),
    ...options.constants,
  }
  mkdirSync(join(dir, 'database'))
  const defines = Object.entries(constants)
    .map(([name, value]) => `define(${phpString(name)}, ${typeof value === 'string' ? phpString(value) : JSON.stringify(value)});`)
    .join('\n')
  writeFileSync(
    join(root, 'wp-config.php'),
    `<?php
// Written by test/support/wordpress.ts. Every request arrives through the TLS proxy (or is a test's CLI run).
$_SERVER['HTTPS'] = 'on';
if (empty($_SERVER['HTTP_HOST'])) { $_SERVER['HTTP_HOST'] = '127.0.0.1:${proxy.port}'; }
${defines}
$table_prefix = 'wp_';
if (!defined('ABSPATH')) { define('ABSPATH', __DIR__ . '/'); }
require_once ABSPATH . 'wp-settings.php';
`,
  )
  // php -S has no rewrite rules: a router sends what is no file to index.php (pretty permalinks, /wp-json/).
  writeFileSync(
    join(dir, 'router.php'),
    `<?php
$path = urldecode((string) parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH));
$file = $_SERVER['DOCUMENT_ROOT'] . $path;
if ($path !== '/' && file_exists($file)) {
    if (is_dir($file) && !file_exists(rtrim($file, '/') . '/index.php')) { return false; }
    return false;
}
$_SERVER['SCRIPT_NAME'] = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = $_SERVER['DOCUMENT_ROOT'] . '/index.php';
$_SERVER['PHP_SELF'] = '/index.php';
require $_SERVER['SCRIPT_FILENAME'];
`,
  )
  // The CLI runner: loads WordPress as a request to the site would, then runs the test's code.
  writeFileSync(
    join(dir, 'run.php'),
    `<?php
$_SERVER['HTTP_HOST'] = '127.0.0.1:${proxy.port}';
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_NAME'] = '127.0.0.1';
$_SERVER['SERVER_PORT'] = '${proxy.port}';
$_SERVER['REQUEST_METHOD'] = 'GET';
if (getenv('ALTTEXT_WP_INSTALLING')) { define('WP_INSTALLING', true); }
require ${phpString(join(root, 'wp-load.php'))};
$__result = require $argv[1];
if (getenv('ALTTEXT_WP_JSON')) { echo "\\n@@alttext-json@@" . wp_json_encode($__result); }
`,
  )
  const phpIni = [
    '-d',
    `error_log=${errorLog}`,
    '-d',
    'log_errors=1',
    '-d',
    'display_errors=stderr',
    '-d',
    'memory_limit=512M',
    '-d',
    'upload_max_filesize=64M',
    '-d',
    'post_max_size=64M',
  ]
  let stderrText = ''
  let server: Subprocess<'ignore', 'ignore', 'pipe'> | null = null
  const readStderr = async (proc: Subprocess<'ignore', 'ignore', 'pipe'>) => {
    const decoder = new TextDecoder()
    // php -S logs every request on stderr: only what is not such a line is kept.
    for await (const chunk of proc.stderr) {
      const lines = decoder.decode(chunk).split('\n')
      stderrText += lines
        .filter((line) => line && !/\] (\d+\.){3}\d+:\d+ (Accepted|Closing|\[\d+\]: )|Development Server \(/.test(line))
        .map((line) => `${line}\n`)
        .join('')
    }
  }
  const startServer = async () => {
    // setsid: php -S forks workers; the group is what kill() ends. Workers: WordPress calls itself (and the
    // browser tests load pages with many assets) while another request is running.
    server = Bun.spawn(['setsid', 'php', ...phpIni, '-S', `127.0.0.1:${phpPort}`, '-t', root, join(dir, 'router.php')], {
      cwd: root,
      env: { ...process.env, PHP_CLI_SERVER_WORKERS: '4' },
      stdout: 'ignore',
      stderr: 'pipe',
    })
    void readStderr(server)
    // Ready when this server answers: a worker of a killed one may still hold the port for a moment.
    const deadline = Date.now() + 15_000
    for (;;) {
      if (server.exitCode !== null) throw new Error(`php -S exited ${server.exitCode}: ${stderrText}`)
      try {
        const res = await fetch(`http://127.0.0.1:${phpPort}/wp-includes/images/blank.gif`)
        await res.arrayBuffer()
        if (res.ok && server.exitCode === null) return
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`php -S did not listen on ${phpPort}: ${stderrText}`)
      await Bun.sleep(20)
    }
  }
  /** Until nothing listens on the php port any more (the killed server's workers are gone). */
  const portFreed = async () => {
    const deadline = Date.now() + 10_000
    for (;;) {
      try {
        const socket = await Bun.connect({ hostname: '127.0.0.1', port: phpPort, socket: { data() {} } })
        socket.end()
      } catch {
        return
      }
      if (Date.now() > deadline) throw new Error(`port ${phpPort} still taken after the kill`)
      await Bun.sleep(20)
    }
  }

  let snippets = 0
  const runPhp = async (code: string, env: Record<string, string> = {}) => {
    const file = join(dir, `snippet-${++snippets}.php`)
    writeFileSync(file, `<?php\n${code}\n`)
    const proc = Bun.spawn(['php', ...phpIni, join(dir, 'run.php'), file], { cwd: root, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
    const [out, err, status] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    rmSync(file, { force: true })
    if (status !== 0) throw new Error(`PHP exited ${status}: ${err}\n${out}`)
    return out
  }
  const wpJson = async <T>(code: string, env: Record<string, string> = {}): Promise<T> => {
    const out = await runPhp(code, { ...env, ALTTEXT_WP_JSON: '1' })
    const at = out.lastIndexOf('@@alttext-json@@')
    if (at < 0) throw new Error(`no result from PHP: ${out}`)
    return JSON.parse(out.slice(at + '@@alttext-json@@'.length)) as T
  }

  const makeUser = async (login: string, role: string, password: string): Promise<WpUser> => {
    const made = await wpJson<{ id: number; app: string }>(`
      $id = username_exists(${phpString(login)}) ?: wp_insert_user(['user_login' => ${phpString(login)}, 'user_pass' => ${phpString(password)}, 'user_email' => ${phpString(`${login}@example.com`)}, 'role' => ${phpString(role)}]);
      if (is_wp_error($id)) { throw new Exception($id->get_error_message()); }
      [$app] = WP_Application_Passwords::create_new_application_password($id, ['name' => 'tests']);
      return ['id' => $id, 'app' => $app];`)
    return { id: made.id, login, password, appPassword: made.app }
  }

  try {
    await wpJson(
      `require_once ABSPATH . 'wp-admin/includes/upgrade.php';
      $result = wp_install('alttext test site', ${phpString(ADMIN.login)}, ${phpString(ADMIN.email)}, true, '', wp_slash(${phpString(ADMIN.password)}));
      update_option('permalink_structure', '/%postname%/');
      return $result['user_id'];`,
      { ALTTEXT_WP_INSTALLING: '1' },
    )
    const admin = await makeUser(ADMIN.login, 'administrator', ADMIN.password)
    const settings = JSON.stringify(options.options ?? {})
    await wpJson(`
      foreach (json_decode(${phpString(settings)}, true) as $name => $value) { update_option($name, $value); }
      require_once ABSPATH . 'wp-admin/includes/plugin.php';
      ${options.activatePlugin !== false && existsSync(PLUGIN_DIR) ? `$activated = activate_plugin('alttext/alttext.php'); if (is_wp_error($activated)) { throw new Exception($activated->get_error_message()); }` : ''}
      flush_rewrite_rules();
      return true;`)
    await startServer()

    const request = (path: string, init: RequestInit = {}) => fetch(url + path, { ...init, redirect: 'manual', tls: { ca: tls.cert } } as RequestInit)
    let users = 0
    const wordpress: WordPress = {
      url,
      root,
      caPath,
      caPem: tls.cert,
      admin,
      request,
      async rest(path, init = {}) {
        const headers: Record<string, string> = { ...init.headers }
        const as = init.as === undefined ? admin : init.as
        if (as) headers.authorization = `Basic ${Buffer.from(`${as.login}:${as.appPassword}`).toString('base64')}`
        let body = init.body
        if (init.json !== undefined) {
          body = JSON.stringify(init.json)
          headers['content-type'] = 'application/json'
        }
        const res = await request(`/wp-json${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body })
        const text = await res.text()
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        return { status: res.status, body: parsed as any, text, headers: res.headers }
      },
      wp: (code) => runPhp(code),
      wpJson: (code) => wpJson(code),
      async setOptions(options) {
        await wordpress.wp(`foreach (json_decode(${phpString(JSON.stringify(options))}, true) as $k => $v) { update_option($k, $v); }`)
      },
      user: (role) => makeUser(`${role}${++users}`, role, `password-${role}-${users}`),
      async upload(bytes, filename, contentType, as) {
        const res = await wordpress.rest('/wp/v2/media', {
          method: 'POST',
          body: bytes,
          headers: { 'content-type': contentType, 'content-disposition': `attachment; filename="${filename}"` },
          as: as ?? admin,
        })
        return { status: res.status, id: res.body?.id as number, body: res.body }
      },
      async cron() {
        // No doing_wp_cron parameter: with one, wp-cron.php runs only if its lock transient already holds that value.
        const res = await request('/wp-cron.php')
        await res.arrayBuffer()
        return res.status
      },
      kill() {
        if (server?.pid) {
          try {
            process.kill(-server.pid, 'SIGKILL')
          } catch {
            // already gone
          }
        }
      },
      async restart() {
        if (server && server.exitCode === null && server.signalCode === null) wordpress.kill()
        await server?.exited
        await portFreed()
        // The port may linger a moment after the kill; php -S fails fast then, and is tried again.
        const deadline = Date.now() + 10_000
        for (;;) {
          try {
            await startServer()
            return
          } catch (error) {
            if (Date.now() > deadline) throw error
            await Bun.sleep(50)
          }
        }
      },
      phpLog: () => `${existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : ''}${stderrText}`,
      async stop() {
        wordpress.kill()
        await server?.exited
        proxy.stop(true)
        rmSync(dir, { recursive: true, force: true })
      },
    }
    return wordpress
  } catch (error) {
    if (server) {
      try {
        process.kill(-(server as Subprocess).pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    proxy.stop(true)
    const log = existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : ''
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`WordPress did not start: ${(error as Error).message}\n${log}`)
  }
}
