// The WordPress harness itself: a real WordPress over HTTPS, application passwords, the plugin active,
// PHP run inside WordPress, and a kill of the web server that loses nothing written.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startWordPress, type WordPress } from '../support/wordpress'

let wp: WordPress

beforeAll(async () => {
  wp = await startWordPress()
}, 120_000)

afterAll(async () => {
  await wp?.stop()
})

describe('the WordPress harness', () => {
  test('answers REST over HTTPS with the admin application password', async () => {
    const me = await wp.rest('/wp/v2/users/me?context=edit')
    expect(me.status).toBe(200)
    expect(me.body.roles).toEqual(['administrator'])
    expect(wp.url.startsWith('https://127.0.0.1:')).toBe(true)
  })

  test('has the plugin active and runs PHP inside WordPress', async () => {
    expect(await wp.wpJson('return get_option("active_plugins");')).toContain('alttext/alttext.php')
    expect(await wp.wpJson('return home_url();')).toBe(wp.url)
  })

  test('serves the static files of the build', async () => {
    const css = await wp.request('/wp-includes/css/dashicons.min.css')
    expect(css.status).toBe(200)
    expect(await css.text()).toContain('dashicons')
  })

  test('a killed web server comes back with what was written', async () => {
    await wp.wp('update_option("alttext_harness_probe", "kept");')
    wp.kill()
    await wp.restart()
    expect(await wp.wpJson('return get_option("alttext_harness_probe");')).toBe('kept')
    expect((await wp.rest('/wp/v2/users/me')).status).toBe(200)
  })
})
