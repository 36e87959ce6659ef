// The plugin against a real WordPress and the real alttext service (fake model): upload → pending
// suggestion → decision in the console → organisation webhook → alt text in WordPress, and the reverse;
// fill-empty, never-overwrite, stale, forged and replayed webhooks, failures, pull, capabilities, language,
// uninstall.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { makePng } from '../support/images'
import { startTestService, type TestService, waitUntil } from '../support/service'
import { FAST_WEBHOOKS } from '../webhooks/support'
import { makeOrg, type Member, setWebhook } from '../webhooks/org-support'
import { startWordPress, type WordPress } from '../support/wordpress'

const REPLY = 'Two children flying a red kite on a windy beach.'
let wp: WordPress
let ollama: FakeOllama
let service: TestService
let reviewer: Member
let orgId: string
let owner: Member
let secret: string
let size = 40

beforeAll(async () => {
  wp = await startWordPress()
  ollama = await startFakeOllama({ reply: REPLY })
  service = await startTestService({
    env: {
      OLLAMA_HOST: ollama.url,
      ALTTEXT_MODEL: 'llava',
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: wp.caPath,
      ALTTEXT_RATE_LIMITS: 'off',
    },
    overrides: FAST_WEBHOOKS,
  })
  const org = await makeOrg(service, 'Blog')
  orgId = org.id
  owner = org.owner
  reviewer = await org.member('reviewer')
  secret = (await setWebhook(service.api, orgId, owner.key, `${wp.url}/wp-json/alttext/v1/webhook`)).secret
  await wp.setOptions({ alttext_service_url: service.url, alttext_api_key: owner.key, alttext_mode: 'suggest', alttext_webhook_secret: secret })
}, 120_000)

afterAll(async () => {
  await wp?.stop()
  await service?.stop()
  await ollama?.stop()
})

/** A new PNG each time (distinct bytes: the service's cache would answer a repeat for free). */
async function upload(altText?: string): Promise<number> {
  size += 1
  const res = await wp.upload(makePng(size, 30), `photo-${size}.png`, 'image/png')
  expect(res.status).toBe(201)
  if (altText !== undefined) await wp.rest(`/wp/v2/media/${res.id}`, { json: { alt_text: altText } })
  return res.id
}

/** The block editor's way: the alt text comes with the upload, stored before WordPress makes the sizes. */
async function uploadWithAlt(altText: string): Promise<number> {
  size += 1
  const res = await wp.rest(`/wp/v2/media?alt_text=${encodeURIComponent(altText)}`, {
    method: 'POST',
    body: makePng(size, 30),
    headers: { 'content-type': 'image/png', 'content-disposition': `attachment; filename="alt-${size}.png"` },
  })
  expect(res.status).toBe(201)
  return res.body.id as number
}

const state = async (id: number) => (await wp.rest(`/alttext/v1/attachments/${id}`)).body

describe('suggest mode, decisions both ways', () => {
  test('upload → pending suggestion in the queue → accepted in the console → alt text in WordPress', async () => {
    const id = await upload()
    const pending = await state(id)
    expect(pending.state).toBe('pending')
    expect(pending.proposed_alt).toBe(REPLY)
    expect(pending.alt).toBe('')
    const inQueue = await service.api.get(`/api/suggestions/${pending.suggestion_id}`, reviewer.key)
    expect(inQueue.body.status).toBe('pending')
    expect(inQueue.body.target).toMatchObject({ kind: 'wordpress-attachment', ref: String(id), site: wp.url })
    expect((await service.api.post(`/api/suggestions/${pending.suggestion_id}/accept`, undefined, reviewer.key)).status).toBe(200)
    await waitUntil(async () => (await state(id)).state === 'accepted', 'the webhook to reach WordPress', 15_000)
    expect((await wp.rest(`/wp/v2/media/${id}`)).body.alt_text).toBe(REPLY)
  })

  test('decided in WordPress (edited) → decided in alttext', async () => {
    const id = await upload()
    const { suggestion_id } = await state(id)
    const decided = await wp.rest(`/alttext/v1/attachments/${id}/accept`, { json: { alt_text: 'A red kite over a beach.' } })
    expect(decided.status).toBe(200)
    expect(decided.body).toMatchObject({ state: 'edited', alt: 'A red kite over a beach.' })
    const there = await service.api.get(`/api/suggestions/${suggestion_id}`, reviewer.key)
    expect(there.body).toMatchObject({ status: 'edited', final_alt: 'A red kite over a beach.' })
  })

  test('rejected in WordPress → rejected in alttext, alt text untouched', async () => {
    const id = await upload()
    const { suggestion_id } = await state(id)
    const decided = await wp.rest(`/alttext/v1/attachments/${id}/reject`, { json: { reason: 'Not what it shows.' } })
    expect(decided.body).toMatchObject({ state: 'rejected', alt: '' })
    expect((await service.api.get(`/api/suggestions/${suggestion_id}`, reviewer.key)).body).toMatchObject({ status: 'rejected', reason: 'Not what it shows.' })
  })

  test('an upload that has a person’s alt text gets no suggestion', async () => {
    const id = await uploadWithAlt('Written by a person.')
    expect(await state(id)).toMatchObject({ state: 'none', alt: 'Written by a person.', suggestion_id: null })
  })
})

describe('the stale rule', () => {
  test('a person changes the alt before the console decides: their text wins, state stale', async () => {
    const id = await upload()
    const { suggestion_id } = await state(id)
    await wp.rest(`/wp/v2/media/${id}`, { json: { alt_text: 'My own words.' } })
    await service.api.post(`/api/suggestions/${suggestion_id}/accept`, undefined, reviewer.key)
    await waitUntil(async () => (await state(id)).state === 'stale', 'the webhook to mark it stale', 15_000)
    const after = await state(id)
    expect(after.alt).toBe('My own words.')
    expect(after.error).toContain('changed in WordPress')
  })

  test('a person changes the alt before deciding in WordPress: stale, and rejected in alttext as stale', async () => {
    const id = await upload()
    const { suggestion_id } = await state(id)
    await wp.rest(`/wp/v2/media/${id}`, { json: { alt_text: 'Typed meanwhile.' } })
    const decided = await wp.rest(`/alttext/v1/attachments/${id}/accept`, { json: {} })
    expect(decided.body).toMatchObject({ state: 'stale', alt: 'Typed meanwhile.' })
    expect((await service.api.get(`/api/suggestions/${suggestion_id}`, reviewer.key)).body).toMatchObject({
      status: 'rejected',
      reason: 'stale: changed in WordPress',
    })
  })
})

describe('fill-empty mode', () => {
  test('fills an empty alt, and never overwrites a person’s', async () => {
    await wp.setOptions({ alttext_mode: 'fill-empty' })
    try {
      const id = await upload()
      expect(await state(id)).toMatchObject({ state: 'filled', alt: REPLY })
      const personal = await uploadWithAlt('A person wrote this.')
      expect(await state(personal)).toMatchObject({ state: 'none', alt: 'A person wrote this.' })
      const asked = await wp.rest('/alttext/v1/generate', { json: { attachment_id: personal } })
      expect(asked.status).toBe(200)
      expect(asked.body.alt).toBe('A person wrote this.')
      expect(asked.body.state).not.toBe('filled')
    } finally {
      await wp.setOptions({ alttext_mode: 'suggest' })
    }
  })
})

function signed(body: string, t = Math.floor(Date.now() / 1000), key = secret) {
  return `t=${t},v1=${createHmac('sha256', key).update(`${t}.${body}`).digest('hex')}`
}

describe('the webhook receiver', () => {
  test('a forged signature, a too-old timestamp, a replay: refused, nothing written', async () => {
    const id = await upload()
    const pending = await state(id)
    const body = JSON.stringify({
      event: 'suggestion.decided',
      org_id: orgId,
      suggestion: {
        id: pending.suggestion_id,
        status: 'accepted',
        final_alt: 'Forged text.',
        target: { kind: 'wordpress-attachment', ref: String(id), site: wp.url },
      },
      decision: 'accepted',
      decided_by: 'x@example.com',
      decided_at: new Date().toISOString(),
    })
    const post = (signature: string) =>
      wp.rest('/alttext/v1/webhook', { method: 'POST', body, headers: { 'content-type': 'application/json', 'alttext-signature': signature }, as: null })
    expect((await post(signed(body, undefined, 'whsec_not_the_secret'))).status).toBe(401)
    expect((await post(signed(body, Math.floor(Date.now() / 1000) - 301))).status).toBe(401)
    expect((await post('t=1,v1=00')).status).toBe(401)
    expect((await state(id)).alt).toBe('')
    const good = signed(body)
    expect((await post(good)).status).toBe(200)
    expect((await state(id)).alt).toBe('Forged text.')
    await wp.rest(`/wp/v2/media/${id}`, { json: { alt_text: '' } })
    expect((await post(good)).status).toBe(409)
    expect((await state(id)).alt).toBe('')
  })

  test('an attachment deleted while pending: its webhook is answered 2xx, nothing breaks', async () => {
    const id = await upload()
    const { suggestion_id } = await state(id)
    expect((await wp.rest(`/wp/v2/media/${id}?force=true`, { method: 'DELETE' })).status).toBe(200)
    await service.api.post(`/api/suggestions/${suggestion_id}/accept`, undefined, reviewer.key)
    await waitUntil(
      async () => {
        const res = await service.api.get('/api/webhook-deliveries?limit=100', owner.key)
        return res.body.items.some((d: any) => d.suggestion_id === suggestion_id && d.status === 'delivered')
      },
      'the delivery for the deleted attachment',
      15_000,
    )
    expect(wp.phpLog()).not.toContain('Fatal')
  })
})

describe('the pull fallback', () => {
  test('applies a console decision that no webhook brought', async () => {
    await wp.setOptions({ alttext_webhook_secret: 'whsec_wrong_so_webhooks_fail' })
    try {
      const id = await upload()
      const { suggestion_id } = await state(id)
      await service.api.post(`/api/suggestions/${suggestion_id}/accept`, { alt_text: 'Pulled text.' }, reviewer.key)
      expect((await state(id)).state).toBe('pending')
      expect(await wp.wpJson('return Alttext\\Pull::run();')).toMatchObject({ applied: 1 })
      expect(await state(id)).toMatchObject({ state: 'edited', alt: 'Pulled text.' })
    } finally {
      await wp.setOptions({ alttext_webhook_secret: secret })
    }
  })
})

describe('failures keep the upload', () => {
  test('service down, wrong key: state failed with plain words', async () => {
    await wp.setOptions({ alttext_service_url: 'http://127.0.0.1:9' })
    const down = await upload()
    expect(await state(down)).toMatchObject({ state: 'failed' })
    expect((await state(down)).error).toContain('could not be reached')
    await wp.setOptions({ alttext_service_url: service.url, alttext_api_key: 'alt_wrong_key_0000000000000000' })
    const wrong = await upload()
    expect((await state(wrong)).error).toContain('refused the API key')
    await wp.setOptions({ alttext_api_key: owner.key })
    for (const id of [down, wrong]) expect((await wp.rest(`/wp/v2/media/${id}`)).status).toBe(200)
  })

  test('a 40 MB TIFF: too_large with a clear message, upload kept', async () => {
    const res = await wp.upload(tiff(6400, 6400), 'scan.tif', 'image/tiff')
    expect(res.status).toBe(201)
    const after = await state(res.id)
    expect(after.state).toBe('too_large')
    expect(after.error).toContain('TIFF')
  })
})

describe('capabilities', () => {
  test('a subscriber may not generate, an author may not decide, anonymous may not read', async () => {
    const subscriber = await wp.user('subscriber')
    const author = await wp.user('author')
    const id = await upload()
    expect((await wp.rest('/alttext/v1/generate', { json: { attachment_id: id }, as: subscriber })).status).toBe(403)
    expect((await wp.rest(`/alttext/v1/attachments/${id}/accept`, { json: {}, as: author })).status).toBe(403)
    expect((await wp.rest('/alttext/v1/status', { as: null })).status).toBe(401)
    expect((await wp.rest('/alttext/v1/status', { as: author })).status).toBe(200)
  })

  test('cookie auth without the REST nonce is refused, with it allowed', async () => {
    const cookies = await logIn()
    const withoutNonce = await wp.request('/wp-json/alttext/v1/status', { headers: { cookie: cookies } })
    expect(withoutNonce.status).toBe(401)
    const nonce = await (await wp.request('/wp-admin/admin-ajax.php?action=rest-nonce', { headers: { cookie: cookies } })).text()
    const withNonce = await wp.request('/wp-json/alttext/v1/status', { headers: { cookie: cookies, 'x-wp-nonce': nonce } })
    expect(withNonce.status).toBe(200)
  })
})

describe('language and WP-CLI', () => {
  test('locales map to BCP 47 tags', async () => {
    const tags = await wp.wpJson(
      `return array_map([Alttext\\Language::class, 'fromLocale'], ['de_DE', 'de_DE_formal', 'pt_BR', 'pt_PT_ao90', 'en_GB', 'en_US', 'es_419', 'zh_CN', 'zh_TW', 'fr', '']);`,
    )
    expect(tags).toEqual(['de-DE', 'de-DE', 'pt-BR', 'pt-PT', 'en-GB', 'en-US', 'es-419', 'zh-Hans', 'zh-Hant', 'fr', 'en'])
  })

  test("the attachment's language under WPML or Polylang wins over the site's locale", async () => {
    const id = await upload()
    const wpml = await wp.wpJson(`add_filter('wpml_post_language_details', fn ($d, $id) => ['locale' => 'pt_BR'], 10, 2);
      return Alttext\\Language::forAttachment(${id});`)
    expect(wpml).toBe('pt-BR')
    const polylang = await wp.wpJson(`function pll_get_post_language($id, $field) { return $field === 'locale' ? 'de_DE' : 'de'; }
      return Alttext\\Language::forAttachment(${id});`)
    expect(polylang).toBe('de-DE')
    expect(await wp.wpJson(`return Alttext\\Language::forAttachment(${id});`)).toBe('en-US')
  })

  test('a pt_BR site gets its suggestion in pt-BR', async () => {
    // A language pack is not at hand (WPLANG only takes installed ones): the locale filter, as a mu-plugin.
    const muPlugin = join(wp.root, 'wp-content', 'mu-plugins', 'locale-pt-br.php')
    mkdirSync(dirname(muPlugin), { recursive: true })
    writeFileSync(muPlugin, "<?php add_filter('locale', fn () => 'pt_BR');\n")
    try {
      const id = await upload()
      const after = await state(id)
      expect(after).toMatchObject({ state: 'pending', language: 'pt-BR' })
      const made = await service.api.get(`/api/suggestions/${after.suggestion_id}`, owner.key)
      expect(made.body.language).toBe('pt-BR')
    } finally {
      rmSync(muPlugin)
    }
  })

  test('wp alttext generate and status, through a stand-in for WP_CLI', async () => {
    const id = await upload()
    const out = await wp.wp(`
      class WP_CLI { public static function log($m) { echo "log: $m\\n"; } public static function success($m) { echo "success: $m\\n"; }
        public static function warning($m) { echo "warning: $m\\n"; } public static function error($m) { echo "error: $m\\n"; } }
      $cli = new Alttext\\Cli();
      $cli->generate(['${id}'], []);
      $cli->status([], []);`)
    expect(out).toContain(`log: ${id}: pending`)
    expect(out).toContain('success: 1 images sent.')
    expect(out).toContain('log: configured: yes')
  })
})

describe('uninstall', () => {
  test('removes the options and every _alttext_ meta', async () => {
    const left = await wp.wpJson(`
      define('WP_UNINSTALL_PLUGIN', 'alttext/alttext.php');
      require WP_PLUGIN_DIR . '/alttext/uninstall.php';
      global $wpdb;
      return [
        'meta' => (int) $wpdb->get_var("SELECT COUNT(*) FROM {$wpdb->postmeta} WHERE meta_key LIKE '\\\\_alttext\\\\_%'"),
        'options' => (int) $wpdb->get_var("SELECT COUNT(*) FROM {$wpdb->options} WHERE option_name LIKE 'alttext\\\\_%'"),
        'alt' => (int) $wpdb->get_var("SELECT COUNT(*) FROM {$wpdb->postmeta} WHERE meta_key = '_wp_attachment_image_alt' AND meta_value <> ''"),
      ];`)
    expect(left).toMatchObject({ meta: 0, options: 0 })
    expect(left.alt).toBeGreaterThan(0)
  })
})

async function logIn(): Promise<string> {
  const res = await wp.request('/wp-login.php', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'wordpress_test_cookie=WP%20Cookie%20check' },
    body: new URLSearchParams({ log: wp.admin.login, pwd: wp.admin.password, testcookie: '1', redirect_to: '/wp-admin/' }).toString(),
  })
  const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]!)
  expect(cookies.some((c) => c.startsWith('wordpress_logged_in_'))).toBe(true)
  return cookies.join('; ')
}

/** An uncompressed 8-bit grey TIFF: WordPress's GD makes no sizes from it, and it is over 10 MB. */
function tiff(width: number, height: number): Uint8Array {
  const pixels = width * height
  const entries: [number, number, number, number][] = [
    [256, 4, 1, width],
    [257, 4, 1, height],
    [258, 3, 1, 8],
    [259, 3, 1, 1],
    [262, 3, 1, 1],
    [273, 4, 1, 8 + 2 + 12 * 9 + 4],
    [277, 3, 1, 1],
    [278, 4, 1, height],
    [279, 4, 1, pixels],
  ]
  const headerBytes = 8 + 2 + 12 * entries.length + 4
  const bytes = new Uint8Array(headerBytes + pixels)
  const view = new DataView(bytes.buffer)
  bytes.set([0x49, 0x49, 42, 0], 0)
  view.setUint32(4, 8, true)
  view.setUint16(8, entries.length, true)
  entries.forEach(([tag, type, count, value], i) => {
    const at = 10 + i * 12
    view.setUint16(at, tag, true)
    view.setUint16(at + 2, type, true)
    view.setUint32(at + 4, count, true)
    if (type === 3) view.setUint16(at + 8, value, true)
    else view.setUint32(at + 8, value, true)
  })
  return bytes
}
