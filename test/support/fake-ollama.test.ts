// Proves the fake speaks Ollama's protocol by driving it with the official `ollama` client,
// plus raw fetch where the client hides what goes over the wire (content types, defaults).
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { Transformer } from '@napi-rs/image'
import { Ollama } from 'ollama'
import { sniffImage, startFakeOllama, type FakeOllama, type RecordedImage } from './fake-ollama.ts'

let fake: FakeOllama
let client: Ollama

beforeAll(async () => {
  fake = await startFakeOllama()
  client = new Ollama({ host: fake.url })
})

afterEach(() => {
  client.abort()
  fake.reset()
})

afterAll(async () => {
  await fake.stop()
})

const userMessage = (content: string) => [{ role: 'user', content }]

async function makePng(width: number, height: number): Promise<Uint8Array> {
  const pixels = new Uint8Array(width * height * 4).fill(200)
  return new Uint8Array(await Transformer.fromRgbaPixels(pixels, width, height).png())
}

async function makeJpeg(width: number, height: number): Promise<Uint8Array> {
  const pixels = new Uint8Array(width * height * 4).fill(90)
  return new Uint8Array(await Transformer.fromRgbaPixels(pixels, width, height).jpeg(80))
}

/** The ollama client's ResponseError is not exported; this is its shape. */
type ClientError = Error & { status_code?: number; error?: string }

async function rejectionOf(promise: Promise<unknown>): Promise<ClientError> {
  try {
    await promise
  } catch (error) {
    return error as ClientError
  }
  throw new Error('expected the promise to reject, but it resolved')
}

function post(path: string, body: string): Promise<Response> {
  return fetch(`${fake.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
}

function onlyImage(images: RecordedImage[]): RecordedImage {
  expect(images).toHaveLength(1)
  const [image] = images
  if (image === undefined) throw new Error('no image recorded')
  return image
}

describe('server basics', () => {
  test('listens on 127.0.0.1 with an ephemeral port', () => {
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(fake.port).toBeGreaterThan(0)
  })

  test('GET and HEAD / say "Ollama is running"; unknown routes and wrong methods answer like gin', async () => {
    const root = await fetch(`${fake.url}/`)
    expect(root.status).toBe(200)
    expect(await root.text()).toBe('Ollama is running')

    const head = await fetch(`${fake.url}/`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')

    const unknown = await fetch(`${fake.url}/api/nope`)
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toBe('404 page not found')

    const wrongMethod = await fetch(`${fake.url}/api/chat`)
    expect(wrongMethod.status).toBe(405)
    expect(fake.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /', 'HEAD /', 'GET /api/nope', 'GET /api/chat'])
  })

  test('version() reads /api/version', async () => {
    expect(await client.version()).toEqual({ version: '0.12.6' })
    fake.behave({ version: '0.12.11' })
    expect((await client.version()).version).toBe('0.12.11')
  })

  test('list() shows installed models under their shortest names, with details', async () => {
    fake.behave({ models: ['llava', 'moondream:1.8b', 'someone/custom'] })
    const { models } = await client.list()
    expect(models.map((model) => model.name)).toEqual(['llava:latest', 'moondream:1.8b', 'someone/custom:latest'])
    const [first] = models
    expect(first?.model).toBe('llava:latest')
    expect(first?.digest).toMatch(/^[0-9a-f]{64}$/)
    expect(first?.size).toBeGreaterThan(0)
    expect(Number.isNaN(Date.parse(String(first?.modified_at)))).toBe(false)
    expect(first?.details).toMatchObject({ format: 'gguf', family: 'llama', parameter_size: '7B', quantization_level: 'Q4_0' })
    expect(first?.details.families).toContain('clip')
  })

  test('show() matches names like Ollama and reports vision capability', async () => {
    for (const name of ['llava', 'llava:latest', 'LLaVA', 'library/llava', 'registry.ollama.ai/library/llava:latest']) {
      const shown = await client.show({ model: name })
      expect(shown.capabilities).toEqual(['completion', 'vision'])
      expect(shown.details.family).toBe('llama')
      expect(typeof shown.template).toBe('string')
      expect(shown.modelfile).toContain('FROM')
      expect(shown.model_info).toHaveProperty(['general.architecture'], 'llama') // one dotted key, not a path
    }
    const notFound = await rejectionOf(client.show({ model: 'llava:13b' }))
    expect(notFound.name).toBe('ResponseError')
    expect(notFound.status_code).toBe(404)
    expect(notFound.message).toBe("model 'llava:13b' not found")
  })

  test('/api/show accepts the legacy `name` field and requires a model', async () => {
    const legacy = await post('/api/show', JSON.stringify({ name: 'llava' }))
    expect(legacy.status).toBe(200)
    expect(((await legacy.json()) as { capabilities: string[] }).capabilities).toContain('vision')

    const missing = await post('/api/show', '{}')
    expect(missing.status).toBe(400)
    expect(await missing.json()).toEqual({ error: 'model is required' })
  })
})

describe('chat', () => {
  test('non-streaming chat with a PNG returns one complete response and records prompt, image and options', async () => {
    const png = await makePng(3, 2)
    fake.behave({ reply: 'A pale grey rectangle.' })

    const response = await client.chat({
      model: 'llava',
      messages: [{ role: 'user', content: 'Describe this image for alt text.', images: [png] }],
      options: { temperature: 0.2, num_predict: 120 },
      keep_alive: '10m',
    })

    expect(response.model).toBe('llava')
    expect(response.message).toEqual({ role: 'assistant', content: 'A pale grey rectangle.' })
    expect(response.done).toBe(true)
    expect(response.done_reason).toBe('stop')
    expect(Number.isNaN(Date.parse(String(response.created_at)))).toBe(false)
    for (const counter of ['total_duration', 'load_duration', 'prompt_eval_count', 'prompt_eval_duration', 'eval_count', 'eval_duration'] as const) {
      expect(Number.isInteger(response[counter])).toBe(true)
      expect(response[counter]).toBeGreaterThan(0)
    }
    expect(response.eval_count).toBe(4)
    expect(response.prompt_eval_count).toBeGreaterThan(576) // the image's tokens count too

    const [sent] = fake.chatRequests()
    expect(sent?.stream).toBe(false) // the client always says; Ollama's own default is true
    expect(sent?.options).toEqual({ temperature: 0.2, num_predict: 120 })
    expect(sent?.keep_alive).toBe('10m')
    expect(sent?.messages?.[0]?.content).toBe('Describe this image for alt text.')
    expect(sent?.messages?.[0]?.images).toEqual([Buffer.from(png).toString('base64')])

    const image = onlyImage(fake.requests.at(-1)?.images ?? [])
    expect(image.bytes).toEqual(png)
    expect(image).toMatchObject({ format: 'png', width: 3, height: 2 })
    expect(fake.requests.at(-1)?.headers['user-agent']).toStartWith('ollama-js/0.6.4')
  })

  test('streaming chat yields partial contents, then one final done line with the counters', async () => {
    fake.behave({ reply: 'Three small words here.' })
    const parts = []
    for await (const part of await client.chat({ model: 'llava', messages: userMessage('hi'), stream: true })) parts.push(part)

    expect(parts.length).toBe(5) // four word tokens + the final line
    expect(parts.map((part) => part.message.content).join('')).toBe('Three small words here.')
    expect(parts.slice(0, -1).every((part) => part.done === false && part.message.role === 'assistant')).toBe(true)
    const final = parts.at(-1)
    expect(final?.done).toBe(true)
    expect(final?.done_reason).toBe('stop')
    expect(final?.message).toEqual({ role: 'assistant', content: '' })
    expect(final?.eval_count).toBe(4)
    expect(final?.total_duration).toBeGreaterThan(0)
  })

  test('on the wire: stream defaults to true (NDJSON); stream:false gives one JSON object', async () => {
    fake.behave({ reply: 'Two words.' })
    const streamed = await post('/api/chat', JSON.stringify({ model: 'llava', messages: userMessage('hi') }))
    expect(streamed.headers.get('content-type')).toBe('application/x-ndjson')
    const lines = (await streamed.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { done: boolean })
    expect(lines).toHaveLength(3)
    expect(lines.map((line) => line.done)).toEqual([false, false, true])

    const single = await post('/api/chat', JSON.stringify({ model: 'llava', messages: userMessage('hi'), stream: false }))
    expect(single.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(((await single.json()) as { message: { content: string } }).message.content).toBe('Two words.')
  })

  test('a reply function can answer per call and per prompt', async () => {
    fake.behave({
      reply: ({ callNumber, prompt, images }) => (callNumber === 1 ? `A long first answer about ${prompt} with ${images.length} image.` : 'Short.'),
    })
    const png = await makePng(1, 1)
    const first = await client.chat({ model: 'llava', messages: [{ role: 'user', content: 'a cat', images: [png] }] })
    const second = await client.chat({ model: 'llava', messages: userMessage('shorter please') })
    expect(first.message.content).toBe('A long first answer about a cat with 1 image.')
    expect(second.message.content).toBe('Short.')
  })

  test('options.num_predict caps the answer and reports done_reason "length"', async () => {
    fake.behave({ reply: 'one two three four five six' })
    const capped = await client.chat({ model: 'llava', messages: userMessage('hi'), options: { num_predict: 3 } })
    expect(capped.message.content).toBe('one two three')
    expect(capped.done_reason).toBe('length')
    expect(capped.eval_count).toBe(3)
  })

  test('emptyReply answers with a valid response whose content is ""', async () => {
    fake.behave({ emptyReply: true })
    const response = await client.chat({ model: 'llava', messages: userMessage('hi') })
    expect(response.message.content).toBe('')
    expect(response.done).toBe(true)

    const parts = []
    for await (const part of await client.chat({ model: 'llava', messages: userMessage('hi'), stream: true })) parts.push(part)
    expect(parts).toHaveLength(1)
    expect(parts[0]?.done).toBe(true)
  })

  test('an empty chat loads the model (visible in /api/ps); keep_alive 0 unloads it', async () => {
    const loaded = await client.chat({ model: 'llava', messages: [] })
    expect(loaded.done_reason).toBe('load')
    expect((await client.ps()).models.map((model) => model.name)).toEqual(['llava:latest'])

    const unloaded = await client.chat({ model: 'llava', messages: [], keep_alive: 0 })
    expect(unloaded.done_reason).toBe('unload')
    expect((await client.ps()).models).toEqual([])
  })
})

describe('generate', () => {
  test('non-streaming generate with a JPEG returns `response`, context and counters', async () => {
    const jpeg = await makeJpeg(5, 4)
    fake.behave({ reply: 'A dark square.' })
    const response = await client.generate({ model: 'llava', prompt: 'Describe.', images: [jpeg], options: { temperature: 0 } })

    expect(response.response).toBe('A dark square.')
    expect(response.done).toBe(true)
    expect(response.done_reason).toBe('stop')
    expect(Array.isArray(response.context)).toBe(true)
    expect(response.eval_count).toBe(3)

    const [sent] = fake.generateRequests()
    expect(sent?.prompt).toBe('Describe.')
    expect(sent?.options).toEqual({ temperature: 0 })
    expect(onlyImage(fake.requests.at(-1)?.images ?? [])).toMatchObject({ format: 'jpeg', width: 5, height: 4 })
    expect(fake.chatRequests()).toEqual([])
  })

  test('streaming generate yields partial responses and a final done line', async () => {
    fake.behave({ reply: 'Red on white.' })
    const parts = []
    for await (const part of await client.generate({ model: 'llava', prompt: 'Describe.', stream: true })) parts.push(part)
    expect(parts.map((part) => part.response).join('')).toBe('Red on white.')
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: 'stop', response: '' })
    expect(parts.filter((part) => part.done)).toHaveLength(1)
  })
})

describe('decorative images', () => {
  const ask = 'If the image is purely decorative, reply DECORATIVE: and the reason.'
  const chatWith = (system: string, image: Uint8Array) =>
    client.chat({
      model: 'llava',
      stream: false,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'Alt text:', images: [image] },
      ],
    })

  test('by default no image is decorative, whatever the prompt asks', async () => {
    fake.behave({ reply: 'A grey square.' })
    expect((await chatWith(ask, await makePng(3, 3))).message.content).toBe('A grey square.')
  })

  test('an image the rule picks is called decorative only when the prompt asks', async () => {
    fake.behave({ reply: 'A grey square.', decorative: (image) => image.width === 3, decorativeReason: 'a spacer' })
    expect((await chatWith(ask, await makePng(3, 3))).message.content).toBe('DECORATIVE: a spacer')
    expect((await chatWith('Write alt text.', await makePng(3, 3))).message.content).toBe('A grey square.')
    expect((await chatWith(ask, await makePng(4, 3))).message.content).toBe('A grey square.')
    const generated = await client.generate({ model: 'llava', system: ask, prompt: 'Alt text:', images: [await makePng(3, 3)] })
    expect(generated.response).toBe('DECORATIVE: a spacer')
  })
})

describe('errors as Ollama sends them', () => {
  test('an unknown model rejects with a 404 ResponseError, for chat and generate', async () => {
    const chatError = await rejectionOf(client.chat({ model: 'bakllava', messages: userMessage('hi') }))
    expect(chatError.name).toBe('ResponseError')
    expect(chatError.status_code).toBe(404)
    expect(chatError.message).toBe('model "bakllava" not found, try pulling it first')

    const generateError = await rejectionOf(client.generate({ model: 'llava:34b', prompt: 'hi', stream: true }))
    expect(generateError.status_code).toBe(404)
  })

  test('missing model, invalid JSON and a non-object body are 400s with {"error"}', async () => {
    const missing = await rejectionOf(client.chat({ model: '', messages: userMessage('hi') }))
    expect(missing.status_code).toBe(400)
    expect(missing.message).toBe('model is required')

    const notJson = await post('/api/chat', 'hello')
    expect(notJson.status).toBe(400)
    expect(notJson.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await notJson.json()).toEqual({ error: "invalid character 'h' looking for beginning of value" })

    const truncated = await post('/api/generate', '{"model":"llava"')
    expect(await truncated.json()).toEqual({ error: 'unexpected EOF' })

    const empty = await post('/api/chat', '')
    expect(await empty.json()).toEqual({ error: 'missing request body' })

    const array = await post('/api/chat', '[]')
    expect(array.status).toBe(400)
    expect(((await array.json()) as { error: string }).error).toContain('cannot unmarshal array')
  })

  test('images must be base64 (400) of a decodable image (500)', async () => {
    const badBase64 = await rejectionOf(client.generate({ model: 'llava', prompt: 'x', images: ['not base64!'] }))
    expect(badBase64.status_code).toBe(400)
    expect(badBase64.message).toBe('illegal base64 data at input byte 3')

    const notAnImage = await rejectionOf(
      client.chat({ model: 'llava', messages: [{ role: 'user', content: 'x', images: [new TextEncoder().encode('plain text')] }] }),
    )
    expect(notAnImage.status_code).toBe(500)
    expect(fake.requests.at(-1)?.images[0]?.format).toBe('unknown')
  })

  test('failStatus answers with that status and {"error": failError}, streaming or not', async () => {
    fake.behave({ failStatus: 500 })
    const plain = await rejectionOf(client.chat({ model: 'llava', messages: userMessage('hi') }))
    expect(plain.name).toBe('ResponseError')
    expect(plain.status_code).toBe(500)
    expect(plain.message).toBe('llama runner process has terminated')

    fake.behave({ failStatus: 503, failError: 'server busy, please try again.  maximum pending requests exceeded' })
    const streamed = await rejectionOf(client.generate({ model: 'llava', prompt: 'hi', stream: true }))
    expect(streamed.status_code).toBe(503)
    expect(streamed.message).toStartWith('server busy')
  })

  test('failAfterChunks sends some chunks, then an error line, as when the runner dies mid-answer', async () => {
    fake.behave({ reply: 'one two three four', failAfterChunks: 2, failError: 'llama runner process has terminated: signal: killed' })
    const received: string[] = []
    const consumed = (async () => {
      for await (const part of await client.chat({ model: 'llava', messages: userMessage('hi'), stream: true })) {
        received.push(part.message.content)
      }
    })()
    expect(await rejectionOf(consumed)).toHaveProperty('message', 'llama runner process has terminated: signal: killed')
    expect(received).toEqual(['one', ' two'])

    const plain = await rejectionOf(client.chat({ model: 'llava', messages: userMessage('hi') }))
    expect(plain.status_code).toBe(500)
  })

  test('think on a model without the thinking capability is a 400', async () => {
    const error = await rejectionOf(client.chat({ model: 'llava', messages: userMessage('hi'), think: true }))
    expect(error.status_code).toBe(400)
    expect(error.message).toBe('"llava" does not support thinking')
  })

  test('malformed answers make the client throw (wrong-shape does not: the caller must validate)', async () => {
    fake.behave({ malformed: true })
    expect(await rejectionOf(client.chat({ model: 'llava', messages: userMessage('hi') }))).toBeInstanceOf(SyntaxError)
    const streamed = rejectionOf(
      (async () => {
        for await (const _ of await client.chat({ model: 'llava', messages: userMessage('hi'), stream: true })) {
          // drain
        }
      })(),
    )
    expect((await streamed).message).toBe('Did not receive done or success response in stream.')

    fake.behave({ malformed: 'html' })
    expect(await rejectionOf(client.generate({ model: 'llava', prompt: 'hi' }))).toBeInstanceOf(SyntaxError)

    fake.behave({ malformed: 'wrong-shape' })
    const wrongShape = await client.chat({ model: 'llava', messages: userMessage('hi') })
    expect(wrongShape.message).toBeUndefined()
    expect(wrongShape.done).toBeUndefined()
  })
})

describe('timing, hangs and aborts', () => {
  test('delayMs delays a non-streaming answer', async () => {
    fake.behave({ delayMs: 250 })
    const started = performance.now()
    await client.chat({ model: 'llava', messages: userMessage('hi') })
    expect(performance.now() - started).toBeGreaterThanOrEqual(240)
  })

  test('delayMs is spread over a stream; headers only arrive with the first chunk', async () => {
    fake.behave({ reply: 'a b c', delayMs: 400 }) // 3 tokens + final line: one line per ~100 ms
    const started = performance.now()
    const iterator = await client.chat({ model: 'llava', messages: userMessage('hi'), stream: true })
    const headersAfter = performance.now() - started
    const arrivals: number[] = []
    for await (const _ of iterator) arrivals.push(performance.now() - started)

    expect(headersAfter).toBeGreaterThanOrEqual(90)
    expect(arrivals).toHaveLength(4)
    expect(arrivals.at(-1)).toBeGreaterThanOrEqual(390)
    // Lower bounds only (a busy machine makes timers late, never early): the rest came well after the headers.
    expect((arrivals.at(-1) ?? 0) - headersAfter).toBeGreaterThanOrEqual(250)
  })

  test('hang never answers; aborting the client request counts as aborted()', async () => {
    fake.behave({ hang: true })
    const controller = new AbortController()
    // The client passes no signal on non-streaming calls, so a custom fetch supplies one.
    const abortable = new Ollama({
      host: fake.url,
      fetch: ((input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, signal: controller.signal })) as typeof fetch,
    })
    const pending = rejectionOf(abortable.chat({ model: 'llava', messages: userMessage('hi') }))
    await fake.waitFor(() => fake.inFlight() === 1)
    expect(fake.aborted()).toBe(0)

    controller.abort()
    expect((await pending).name).toBe('AbortError')
    await fake.waitFor(() => fake.aborted() === 1)
    expect(fake.inFlight()).toBe(0)
  })

  test('client.abort() ends a stream that stalls mid-answer, and the fake counts the abort', async () => {
    fake.behave({ reply: 'one two three four', stallAfterChunks: 2 })
    const received: string[] = []
    const consumed = (async () => {
      for await (const part of await client.chat({ model: 'llava', messages: userMessage('hi'), stream: true })) {
        received.push(part.message.content)
        if (received.length === 2) client.abort()
      }
    })()
    expect((await rejectionOf(consumed)).name).toBe('AbortError')
    expect(received).toEqual(['one', ' two'])
    await fake.waitFor(() => fake.aborted() === 1)
    expect(fake.inFlight()).toBe(0)
  })

  test('client.abort() cannot cancel a streaming call still waiting for headers (ollama-js limitation)', async () => {
    fake.behave({ hang: true, reply: 'Finally.' })
    const pending = client.chat({ model: 'llava', messages: userMessage('hi'), stream: true })
    await fake.waitFor(() => fake.inFlight() === 1)
    client.abort() // no effect: the iterator is only registered once the headers arrive
    fake.release()
    const parts = []
    for await (const part of await pending) parts.push(part.message.content)
    expect(parts.join('')).toBe('Finally.')
    expect(fake.aborted()).toBe(0)
  })

  test('release() lets every parked request answer; inFlight() counts them meanwhile', async () => {
    fake.behave({ hang: true, reply: 'Released.' })
    const pending = [1, 2, 3].map(() => client.generate({ model: 'llava', prompt: 'hi' }))
    await fake.waitFor(() => fake.inFlight() === 3)
    fake.behave({ hang: false, reply: 'Changed later.' }) // requests in progress keep their behaviour
    fake.release()
    const answers = await Promise.all(pending)
    expect(answers.map((answer) => answer.response)).toEqual(['Released.', 'Released.', 'Released.'])
    expect(fake.inFlight()).toBe(0)
  })

  test('stop() closes hanging connections promptly and does not count them as client aborts', async () => {
    const own = await startFakeOllama({ hang: true })
    const pending = rejectionOf(new Ollama({ host: own.url }).chat({ model: 'llava', messages: userMessage('hi') }))
    await own.waitFor(() => own.inFlight() === 1)

    const started = performance.now()
    await own.stop()
    expect(await pending).toBeInstanceOf(Error)
    expect(performance.now() - started).toBeLessThan(1000)
    expect(own.aborted()).toBe(0)
    expect(own.inFlight()).toBe(0)
    await own.stop() // idempotent
  })

  test('waitFor rejects when the condition never holds', async () => {
    const error = await rejectionOf(fake.waitFor(() => false, 30))
    expect(error.message).toContain('timed out after 30 ms')
  })

  test('reset() clears requests and restores the behaviour given at start', async () => {
    const own = await startFakeOllama({ models: ['moondream'], reply: 'Start reply.' })
    try {
      const ownClient = new Ollama({ host: own.url })
      own.behave({ reply: 'Changed.', models: ['llava'] })
      expect((await ownClient.generate({ model: 'llava', prompt: 'x' })).response).toBe('Changed.')
      expect(own.requests).toHaveLength(1)

      own.reset()
      expect(own.requests).toHaveLength(0)
      expect((await ownClient.generate({ model: 'moondream', prompt: 'x' })).response).toBe('Start reply.')
      expect(own.generateRequests()).toHaveLength(1)
    } finally {
      await own.stop()
    }
  })
})

describe('sniffImage', () => {
  test('reads format and size from PNG, JPEG and WebP headers, and rejects other bytes', async () => {
    expect(sniffImage(await makePng(7, 3))).toEqual({ format: 'png', width: 7, height: 3 })
    expect(sniffImage(await makeJpeg(9, 6))).toEqual({ format: 'jpeg', width: 9, height: 6 })
    const pixels = new Uint8Array(11 * 5 * 4).fill(30)
    const lossless = new Uint8Array(await Transformer.fromRgbaPixels(pixels, 11, 5).webpLossless())
    expect(sniffImage(lossless)).toEqual({ format: 'webp', width: 11, height: 5 })
    const lossy = new Uint8Array(await Transformer.fromRgbaPixels(pixels, 11, 5).webp(70))
    expect(sniffImage(lossy)).toEqual({ format: 'webp', width: 11, height: 5 })
    const gif = Uint8Array.from([...new TextEncoder().encode('GIF89a'), 12, 0, 8, 0, 0, 0, 0])
    expect(sniffImage(gif)).toEqual({ format: 'gif', width: 12, height: 8 })
    expect(sniffImage(new TextEncoder().encode('<svg></svg>'))).toEqual({ format: 'unknown', width: null, height: null })
  })
})
