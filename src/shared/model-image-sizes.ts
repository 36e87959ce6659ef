// The longest image side sent to a vision model when ALTTEXT_IMAGE_MAX_SIDE is unset, by model family: as
// much as the model's own image processor uses, no more, since a larger image costs decoding, bytes on the
// wire and (for models that size their grid to the image) prompt tokens for nothing. Where every figure comes
// from is in docs/models.md, the same table in prose; keep the two together.

/** For models without an entry: the service's side before the table existed. */
export const DEFAULT_IMAGE_MAX_SIDE = 1024

/**
 * Image tokens one picture may cost a model that sizes its token grid to the image (Qwen-VL, Pixtral,
 * Mistral Small 3.x): 1024, a 32 × 32 grid, inside the 256–1280 range Qwen's model card suggests.
 */
export const IMAGE_TOKEN_BUDGET = 1024

type Family = {
  /** As docs/models.md and the start-up log name it. */
  family: string
  /** Tried on the model's family name: lower case, without registry path and tag (see familyName). */
  match: RegExp
  /** Why this side, in a few words (the start-up log shows it). */
  basis: string
} & (
  | { side: number }
  | {
      /** Side of the square of pixels that becomes one token; the side follows IMAGE_TOKEN_BUDGET. */
      pixelsPerToken: number
      /** The model's own largest side, when it has one. */
      modelMaxSide?: number
    }
)

/** First match wins. */
export const MODEL_IMAGE_SIZES: readonly Family[] = [
  { family: 'llava', match: /^llava/, side: 672, basis: 'LLaVA-1.6 AnyRes: 336-px tiles, up to 672×672' },
  { family: 'llama3.2-vision', match: /^llama-?3\.2.*vision/, side: 1120, basis: '560-px tiles, up to 4 (2×2)' },
  { family: 'qwen2.5-vl', match: /^qwen2(\.5)?-?vl/, pixelsPerToken: 28, basis: 'one token per 28×28 px (14-px patches merged 2×2)' },
  { family: 'qwen3-vl', match: /^qwen3-?vl/, pixelsPerToken: 32, basis: 'one token per 32×32 px (16-px patches merged 2×2)' },
  { family: 'qwen3.5', match: /^qwen3\.5/, pixelsPerToken: 32, basis: 'one token per 32×32 px (16-px patches merged 2×2)' },
  // Gemma 4 pools 16-px patches 3×3 and caps the grid at the server's max_soft_tokens (280 unless set).
  {
    family: 'gemma4',
    match: /^gemma-?4/,
    pixelsPerToken: 48,
    basis: 'one token per 48×48 px (16-px patches pooled 3×3); set the server to 1120 soft tokens',
  },
  { family: 'gemma3n', match: /^gemma-?3n/, side: 768, basis: 'MobileNet-V5 encoder at 256, 512 or 768 px' },
  { family: 'gemma3', match: /^gemma-?3/, side: 896, basis: 'SigLIP encoder at 896×896 (256 tokens)' },
  { family: 'minicpm-v', match: /^minicpm/, side: 1344, basis: 'slices up to 1.8 megapixels (1344×1344)' },
  { family: 'moondream', match: /^moondream/, side: 378, basis: 'SigLIP crops of 378×378' },
  { family: 'pixtral', match: /^pixtral/, pixelsPerToken: 16, modelMaxSide: 1024, basis: 'one token per 16×16 px, at most 1024 px' },
  {
    family: 'mistral-small3.1',
    match: /^mistral-?small-?3\.[12]/,
    pixelsPerToken: 28,
    modelMaxSide: 1540,
    basis: 'one token per 28×28 px (14-px patches merged 2×2), at most 1540 px',
  },
  { family: 'granite-vision', match: /^granite.*vision/, side: 1152, basis: 'LLaVA-NeXT AnyRes: 384-px tiles, up to 1152×1152' },
]

/**
 * The family part of a model name as Ollama and OpenAI-compatible servers spell it: `llava:13b`,
 * `hf.co/org/Qwen2.5-VL-7B-Instruct-GGUF:Q4_K_M` and `Qwen/Qwen2.5-VL-7B-Instruct` become `llava`,
 * `qwen2.5-vl-7b-instruct-gguf` and `qwen2.5-vl-7b-instruct`.
 */
export function familyName(model: string): string {
  const base = model.slice(model.lastIndexOf('/') + 1)
  const tag = base.indexOf(':')
  return (tag >= 0 ? base.slice(0, tag) : base).toLowerCase()
}

export type ModelImageSide = { side: number; family: string | null; basis: string }

/** The default longest side for `model`, and why. */
export function modelImageSide(model: string): ModelImageSide {
  const name = familyName(model)
  const entry = MODEL_IMAGE_SIZES.find((candidate) => candidate.match.test(name))
  if (!entry) return { side: DEFAULT_IMAGE_MAX_SIDE, family: null, basis: `no entry for "${name}" in the table of docs/models.md` }
  if ('side' in entry) return { side: entry.side, family: entry.family, basis: entry.basis }
  const budgetSide = Math.floor(Math.sqrt(IMAGE_TOKEN_BUDGET)) * entry.pixelsPerToken
  const side = entry.modelMaxSide === undefined ? budgetSide : Math.min(budgetSide, entry.modelMaxSide)
  return { side, family: entry.family, basis: `${entry.basis}; ${IMAGE_TOKEN_BUDGET} image tokens at most` }
}
