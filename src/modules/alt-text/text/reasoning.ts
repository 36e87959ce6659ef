// What wraps the model's turn rather than being in it: reasoning a thinking model wrote inline, and
// chat-template tokens a server passed on as text.
import { hasContent } from './plain'

/** Reasoning blocks of thinking models: <think>, <thinking>, <reasoning> (qwen3, deepseek-r1), Kimi-VL's ◁think▷, Magistral's [THINK], Seed's <seed:think>, <|begin_of_thought|>. */
const REASONING_BLOCK =
  /<((?:seed:)?think|thinking|reasoning)\b[^>]*>[\s\S]*?<\/\1\s*>|◁think▷[\s\S]*?◁\/think▷|\[THINK\][\s\S]*?\[\/THINK\]|<\|begin_of_thought\|>[\s\S]*?<\|end_of_thought\|>/giu
/** A close tag without its opening: the chat template put `<think>` in the prompt, so the answer starts inside it. */
const REASONING_TAIL = /^[\s\S]*?(?:<\/(?:think|thinking|reasoning)\s*>|◁\/think▷)/iu
/** An opening never closed: the model was cut off while still reasoning, so nothing after it is an answer. */
const REASONING_UNCLOSED = /(?:<(?:think|thinking|reasoning)\b[^>]*>|◁think▷)[\s\S]*$/iu
/** gpt-oss harmony channels: only the `final` channel is the answer. */
const FINAL_CHANNEL = /<\|channel\|>\s*final\s*<\|message\|>([\s\S]*?)(?:<\|(?:end|return)\|>|$)/iu
/** Ollama's command-line rendering of a thinking model, when a proxy passes it on as text. */
const THINKING_TRANSCRIPT = /^\s*Thinking\.\.\.[\s\S]*?\.\.\.done thinking\.?/u
/** Reasoning written out without tags, ending in a line such as "**Final answer:** …": only what follows counts. */
const FINAL_ANSWER_LINE = /(?:^|\n)(?:[^\S\n]|[#*_>])*final\s+(?:answer|alt[\s-]*text|output|description)[\s*_]*[:：][\s*_]*/iu

/**
 * Takes out what a thinking model reasoned before answering, when the server did not separate it:
 * whole <think>…</think> blocks, a reasoning prefix ending in a lone </think>, an unclosed <think> (no
 * answer came), everything but the final channel of a harmony answer, and untagged reasoning that ends
 * in a "Final answer:" line.
 */
export function stripReasoning(raw: string): string {
  const final = FINAL_CHANNEL.exec(raw)
  if (final) return final[1] ?? ''
  const text = raw.replace(THINKING_TRANSCRIPT, ' ').replace(REASONING_BLOCK, ' ').replace(REASONING_TAIL, ' ').replace(REASONING_UNCLOSED, ' ')
  const answer = FINAL_ANSWER_LINE.exec(text)
  return answer && hasContent(text.slice(answer.index + answer[0].length)) ? text.slice(answer.index + answer[0].length) : text
}

// Chat-template tokens of common vision models, which a server with a wrong template or missing stop
// tokens passes on as text: ChatML (qwen2.5-vl, qwen3-vl, minicpm-v), Llama 3 (llama3.2-vision),
// Gemma (gemma3), Mistral [INST] (llava 1.6, pixtral), llava 1.5's "USER:/ASSISTANT:", DeepSeek.

// A turn label is looked for after the last line break before it ("\n  user:", not "\n\s*user:"): a
// pattern that may cross line breaks re-reads a long run of blank lines from each of them (quadratic).

/** Where the model's own turn starts: text before it is an echoed prompt. */
const ASSISTANT_TURN =
  /<\|im_start\|>\s*assistant\b|<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>|<start_of_turn>\s*model\b|<\|assistant\|>|<｜Assistant｜>|\[\/INST\]|<\|start\|>\s*assistant|(?:^|\n)[^\S\n]*(?:###\s*)?assistant\s*:/iu
/** Where it ends: an end-of-turn token, or the start of another turn when the model ran on. */
const TURN_END =
  /<\|im_end\|>|<\|eot_id\|>|<\|eom_id\|>|<\|end\|>|<\|endoftext\|>|<\|end_of_text\|>|<end_of_turn>|<\/s>|<eos>|<\|return\|>|<｜end▁of▁sentence｜>|<\|END_OF_TURN_TOKEN\|>|<\|im_start\|>|<start_of_turn>|<\|start_header_id\|>|<\|user\|>|<\|system\|>|\[INST\]|\n[^\S\n]*(?:###\s*)?(?:user|human|instruction)\s*:/giu
/** Any other special token, wherever it is: <s>, <|begin_of_text|>, <image>, <|vision_start|>, [IMG]. */
const SPECIAL_TOKEN =
  /<\|[a-z_]{1,40}\|>|<｜[^｜<>]{1,40}｜>|\[\/?(?:INST|IMG|SYS)\]|<<\/?SYS>>|<\/?s>|<(?:bos|eos|pad|unk|image|start_of_image|end_of_image)>/giu

/** The model's own turn, without template tokens: after the first assistant marker, up to the end of that turn. */
export function stripTemplateTokens(raw: string): string {
  let text = raw
  const start = ASSISTANT_TURN.exec(text)
  if (start) text = text.slice(start.index + start[0].length)
  // The first end of turn after some answer ends it; one before any answer (a stray "</s>" up front) does not.
  let checked = 0
  for (const end of text.matchAll(TURN_END)) {
    if (hasContent(text.slice(checked, end.index).replace(SPECIAL_TOKEN, ''))) {
      text = text.slice(0, end.index)
      break
    }
    checked = end.index + end[0].length
  }
  return text.replace(TURN_END, ' ').replace(SPECIAL_TOKEN, ' ')
}
