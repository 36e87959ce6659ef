import pkg from '../package.json' with { type: 'json' }

export const VERSION: string = pkg.version

// Baked in by `bun run build` (bun build --define); absent when running from source.
declare const __ALTTEXT_COMMIT__: string | undefined
declare const __ALTTEXT_BUILD_DATE__: string | undefined

/** The checkout's commit when running from source, or "unknown" (no git, or not a checkout). */
function sourceCommit(): string {
  try {
    const git = Bun.spawnSync(['git', 'rev-parse', '--short=12', 'HEAD'], { cwd: import.meta.dir, stdout: 'pipe', stderr: 'ignore' })
    const commit = git.stdout.toString().trim()
    return git.exitCode === 0 && /^[0-9a-f]{7,40}$/.test(commit) ? commit : 'unknown'
  } catch {
    return 'unknown'
  }
}

/** What `alttext --version` prints: the version, the commit and when it was built (or that it runs from source). */
export function versionLine(): string {
  const built = typeof __ALTTEXT_BUILD_DATE__ === 'string' ? __ALTTEXT_BUILD_DATE__ : undefined
  const commit = typeof __ALTTEXT_COMMIT__ === 'string' ? __ALTTEXT_COMMIT__ : sourceCommit()
  return `alttext ${VERSION} (commit ${commit}, ${built ? `built ${built}` : 'from source, not built'})`
}
