// `bun run lint` for the WordPress plugin: every PHP file parses (`php -l`, PHP 8.0+ syntax on the
// installed PHP) and passes PHP_CodeSniffer with integrations/wordpress/phpcs.xml.dist (PSR-12 and more).
import { Glob } from 'bun'

const root = 'integrations/wordpress'
const files = [...new Glob('**/*.php').scanSync({ cwd: root })].sort().map((file) => `${root}/${file}`)
const missing = ['php', 'phpcs'].filter((tool) => Bun.which(tool) === null)
if (missing.length > 0) {
  console.error(`php-lint: ${missing.join(' and ')} not found; install Debian's php-cli and php-codesniffer`)
  process.exit(1)
}
let failed = false
for (const file of files) {
  const parsed = Bun.spawnSync(['php', '-l', file], { stdout: 'pipe', stderr: 'pipe' })
  if (parsed.exitCode !== 0) {
    failed = true
    process.stderr.write(parsed.stdout.toString() + parsed.stderr.toString())
  }
}
const sniffed = Bun.spawnSync(['phpcs', '-q', `--standard=${root}/phpcs.xml.dist`, '--basepath=.', ...files], { stdout: 'inherit', stderr: 'inherit' })
if (sniffed.exitCode !== 0) failed = true
if (failed) process.exit(1)
console.log(`php-lint: ${files.length} PHP files parse and pass PHP_CodeSniffer (PSR-12)`)
