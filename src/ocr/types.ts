/** One line of text the OCR read, in reading order. `box` in pixels of the image given to read(). */
export type TextLine = { text: string; confidence: number; box: { x: number; y: number; width: number; height: number } }

/**
 * The text an image shows. `text`: the lines joined with "\n" in reading order (top to bottom, left to
 * right; lines on the same row joined by a space). `coverage`: share (0–1) of the image's area covered by
 * text line boxes.
 */
export type ImageText = { text: string; lines: TextLine[]; coverage: number }

/** Reads the text in an encoded image (JPEG/PNG/WebP bytes, as prepared for the model). null: no text. */
export interface TextReader {
  read(image: Uint8Array, signal: AbortSignal): Promise<ImageText | null>
  close(): Promise<void>
}
