// The per-model image size: ALTTEXT_IMAGE_MAX_SIDE wins; unset, the model family's side from the table of
// src/shared/model-image-sizes.ts (documented in docs/models.md), matched without case, path or tag.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { loadConfig } from '../../src/config'
import { DEFAULT_IMAGE_MAX_SIDE, familyName, IMAGE_TOKEN_BUDGET, MODEL_IMAGE_SIZES, modelImageSide } from '../../src/shared/model-image-sizes'

describe('the family name of a model', () => {
  test('drops the tag, the registry path and the case', () => {
    expect(familyName('llava')).toBe('llava')
    expect(familyName('llava:13b')).toBe('llava')
    expect(familyName('Qwen/Qwen2.5-VL-7B-Instruct')).toBe('qwen2.5-vl-7b-instruct')
    expect(familyName('hf.co/unsloth/gemma-3-4b-it-GGUF:Q4_K_M')).toBe('gemma-3-4b-it-gguf')
    // A registry's port is not a tag.
    expect(familyName('registry.local:5000/library/llama3.2-vision:11b')).toBe('llama3.2-vision')
  })
})

describe('the side for a model family', () => {
  const cases: [model: string, side: number, family: string][] = [
    ['llava', 672, 'llava'],
    ['llava:34b', 672, 'llava'],
    ['llava-hf/llava-v1.6-mistral-7b-hf', 672, 'llava'],
    ['llama3.2-vision:11b', 1120, 'llama3.2-vision'],
    ['meta-llama/Llama-3.2-11B-Vision-Instruct', 1120, 'llama3.2-vision'],
    // 1024 tokens = a 32 × 32 grid: 32 × 28 px for Qwen2.5-VL, 32 × 32 px for Qwen3-VL.
    ['qwen2.5vl:7b', 896, 'qwen2.5-vl'],
    ['Qwen/Qwen2.5-VL-72B-Instruct', 896, 'qwen2.5-vl'],
    ['QWEN2.5VL', 896, 'qwen2.5-vl'],
    ['qwen3-vl:8b', 1024, 'qwen3-vl'],
    ['Qwen/Qwen3-VL-8B-Instruct', 1024, 'qwen3-vl'],
    ['qwen3.5:9b', 1024, 'qwen3.5'],
    // Gemma 4: 32 tokens of 48 px a side.
    ['gemma4:e4b', 1536, 'gemma4'],
    ['google/gemma-4-31B-it', 1536, 'gemma4'],
    ['gemma3:4b', 896, 'gemma3'],
    ['google/gemma-3-27b-it', 896, 'gemma3'],
    ['gemma3n:e4b', 768, 'gemma3n'],
    ['minicpm-v:8b', 1344, 'minicpm-v'],
    ['openbmb/MiniCPM-V-2_6', 1344, 'minicpm-v'],
    ['moondream', 378, 'moondream'],
    ['mistralai/Pixtral-12B-2409', 512, 'pixtral'],
    ['mistral-small3.1:24b', 896, 'mistral-small3.1'],
    ['mistralai/Mistral-Small-3.2-24B-Instruct-2506', 896, 'mistral-small3.1'],
    ['granite3.2-vision:2b', 1152, 'granite-vision'],
    ['ibm-granite/granite-vision-3.2-2b', 1152, 'granite-vision'],
  ]
  for (const [model, side, family] of cases) {
    test(`${model}: ${side} px (${family})`, () => {
      expect(modelImageSide(model)).toMatchObject({ side, family })
    })
  }

  test('an unknown model gets the default, and the reason says there is no entry', () => {
    const choice = modelImageSide('bakllava-mystery:7b')
    expect(choice.side).toBe(DEFAULT_IMAGE_MAX_SIDE)
    expect(choice.family).toBeNull()
    expect(choice.basis).toContain('no entry')
    // Text-only relatives of table entries do not match them.
    expect(modelImageSide('qwen2.5:7b').family).toBeNull()
    expect(modelImageSide('mistral-small:24b').family).toBeNull()
  })

  test('every side is within the range ALTTEXT_IMAGE_MAX_SIDE allows (256-4096)', () => {
    for (const entry of MODEL_IMAGE_SIZES) {
      const { side } = modelImageSide(entry.family)
      expect(side).toBeGreaterThanOrEqual(256)
      expect(side).toBeLessThanOrEqual(4096)
    }
  })

  test('a budgeted side costs at most the token budget for a square image', () => {
    for (const entry of MODEL_IMAGE_SIZES) {
      if (!('pixelsPerToken' in entry)) continue
      const { side } = modelImageSide(entry.family)
      expect((side / entry.pixelsPerToken) ** 2).toBeLessThanOrEqual(IMAGE_TOKEN_BUDGET)
    }
  })

  test('docs/models.md lists every family with its side', () => {
    const doc = readFileSync(new URL('../../docs/models.md', import.meta.url), 'utf8')
    for (const entry of MODEL_IMAGE_SIZES)
      expect(doc).toMatch(new RegExp(`\\| \`${entry.family.replace('.', '\\.')}\` \\|[^\\n]*\\| ${modelImageSide(entry.family).side} \\|`))
  })
})

describe('loadConfig', () => {
  test('without ALTTEXT_IMAGE_MAX_SIDE the side follows ALTTEXT_MODEL, and says so', () => {
    const config = loadConfig({ ALTTEXT_MODEL: 'qwen2.5vl:7b' })
    expect(config.imageMaxSide).toBe(896)
    expect(config.imageMaxSideReason).toContain('qwen2.5-vl')
  })

  test('the default model, llava, gets 672', () => {
    expect(loadConfig({}).imageMaxSide).toBe(672)
  })

  test('ALTTEXT_IMAGE_MAX_SIDE wins over the model family', () => {
    const config = loadConfig({ ALTTEXT_MODEL: 'qwen2.5vl:7b', ALTTEXT_IMAGE_MAX_SIDE: '1536' })
    expect(config.imageMaxSide).toBe(1536)
    expect(config.imageMaxSideReason).toBe('ALTTEXT_IMAGE_MAX_SIDE')
  })

  test('an empty ALTTEXT_IMAGE_MAX_SIDE counts as unset', () => {
    expect(loadConfig({ ALTTEXT_MODEL: 'gemma3:4b', ALTTEXT_IMAGE_MAX_SIDE: ' ' }).imageMaxSide).toBe(896)
  })

  test('an unknown model gets 1024', () => {
    const config = loadConfig({ ALTTEXT_MODEL: 'some-new-vlm:3b' })
    expect(config.imageMaxSide).toBe(1024)
    expect(config.imageMaxSideReason).toContain('default')
  })
})
