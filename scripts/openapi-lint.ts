// Writes the service's OpenAPI document to a temporary file and lints it with Redocly's recommended rules:
// the document clients generate code from must have no errors. Builds the app in-process; nothing listens.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app'
import { loadConfig } from '../src/config'
import { createLogger } from '../src/shared/logger'

const dir = mkdtempSync(join(tmpdir(), 'alttext-openapi-'))
const built = buildApp(loadConfig({ ALTTEXT_DB: join(dir, 'alttext.db'), ALTTEXT_RATE_LIMITS: 'off' }), { logger: createLogger(() => {}) })
try {
  const document = await (await built.app.handle(new Request('http://localhost/openapi.json'))).text()
  const file = join(dir, 'openapi.json')
  writeFileSync(file, document)
  const lint = Bun.spawnSync(['bunx', 'redocly', 'lint', '--extends=recommended', '--format=stylish', file], { stdout: 'inherit', stderr: 'inherit' })
  process.exitCode = lint.exitCode
} finally {
  await built.close()
  rmSync(dir, { recursive: true, force: true })
}
