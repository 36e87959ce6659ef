// The corpora of scenario 23, made from a seed so every run and machine audits the same bytes: a Markdown
// tree shaped like a checkout of the Rust book (rust-lang/book: 478 Markdown files, 2.7 MB, which the
// bench cannot download on a machine without network), and a shelf of EPUB books.
//
// The shape was measured on rust-lang/book at 917544888 (2026-12-07): per folder, how many files and the
// deciles of their sizes; per kilobyte of a chapter, how many headings, code blocks, links, lists, tables
// and quotes. Only those counts are kept here, no text of the book.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { bookFiles, buildEpub, type Chapter } from '../../../test/support/epub'
import { random, type Random } from '../../../test/support/fuzz'
import { makeJpeg, makePng } from '../../../test/support/images'

/**
 * What a file is: a chapter of the book (`src/`, prose with Rust listings), a chapter of the print edition
 * (`nostarch/`, the same but long), a "this edition moved" stub (the old editions), a redirect page, or a
 * repository file (README, CONTRIBUTING...).
 */
type Kind = 'chapter' | 'print' | 'stub' | 'redirect' | 'repo'

/** Folders of the checkout, their Markdown file counts, and the deciles (0 % … 100 %) of the files' sizes in bytes. */
const SHAPE: { folder: string; files: number; deciles: number[]; kind: Kind }[] = [
  { folder: 'src', files: 112, deciles: [104, 1284, 2687, 5159, 7690, 9734, 11585, 13269, 17064, 22595, 40398], kind: 'chapter' },
  { folder: 'second-edition/src', files: 102, deciles: [380, 408, 414, 418, 424, 432, 439, 446, 459, 467, 6677], kind: 'stub' },
  { folder: '2018-edition/src', files: 102, deciles: [376, 404, 410, 414, 420, 424, 435, 441, 453, 462, 6782], kind: 'stub' },
  { folder: 'first-edition/src', files: 58, deciles: [375, 381, 384, 387, 393, 399, 404, 409, 437, 452, 2232], kind: 'stub' },
  { folder: 'redirects', files: 59, deciles: [237, 456, 476, 533, 608, 634, 693, 735, 812, 930, 1515], kind: 'redirect' },
  { folder: 'nostarch', files: 33, deciles: [271, 3201, 9304, 10559, 37993, 42536, 51014, 52678, 59297, 76356, 105247], kind: 'print' },
  { folder: '', files: 5, deciles: [607, 1487, 3769, 3945, 7290], kind: 'repo' },
  { folder: 'packages/trpl', files: 3, deciles: [447, 541, 834], kind: 'repo' },
  { folder: 'packages/mdbook-trpl/src/bin', files: 2, deciles: [416, 1916], kind: 'repo' },
]

export const MARKDOWN_CORPUS = { seed: 35, files: SHAPE.reduce((sum, folder) => sum + folder.files, 0) }

const WORDS = (
  'ownership borrow value variable memory stack heap string vector compiler program function type trait ' +
  'struct enum match pattern error result option reference lifetime thread channel closure iterator crate ' +
  'module package test scope data code rule call return owner move copy clone slice index method field ' +
  'the a of to in is and that we this with for it as be on you can our when will have an are not which'
).split(' ')
const RUST_LINES = [
  'fn main() {',
  '    let s = String::from("hello");',
  '    let mut v: Vec<i32> = Vec::new();',
  '    v.push(5);',
  '    println!("The value is: {x}");',
  '    for i in &v {',
  '        println!("{i}");',
  '    }',
  '    let r = &s;',
  '    match guess.cmp(&secret_number) {',
  '        Ordering::Less => println!("Too small!"),',
  '        Ordering::Equal => break,',
  '    }',
  '#![allow(unused)]',
  '    let config = Config::build(&args).unwrap_or_else(|err| {',
  '        process::exit(1);',
  '    });',
  'impl<T: Display> Summary for Pair<T> {',
  '    fn summarize(&self) -> String { format!("{}", self.x) }',
  '}',
  '$ cargo run',
  '   Compiling guessing_game v0.1.0 (file:///projects/guessing_game)',
  '    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.50s',
]
/** Alt texts of the corpus's images: good ones, and a few a gate should catch (empty, a file name). */
const ALTS = [
  'A diagram with stacked boxes labeled Task A and Task B, with arrows between their subtasks',
  'Three tables: the stack of s1 with a pointer, length and capacity, and the heap holding the bytes',
  'Ferris with a question mark',
  'A rectangle from (0, 0) to (30, 50) with its width and height labelled',
]

function sizeOf(deciles: number[], u: number): number {
  const at = u * (deciles.length - 1)
  const low = Math.floor(at)
  const high = Math.min(deciles.length - 1, low + 1)
  return Math.round(deciles[low]! + (deciles[high]! - deciles[low]!) * (at - low))
}

function words(rng: Random, count: number): string {
  const out: string[] = []
  for (let i = 0; i < count; i++) {
    const word = rng.pick(WORDS)
    const roll = rng.next()
    out.push(roll < 0.06 ? `\`${word}\`` : roll < 0.08 ? `_${word}_` : roll < 0.09 ? `**${word}**` : word)
  }
  return out.join(' ')
}

/** Prose wrapped at 80 columns, as the book is written, with links of both kinds. */
function paragraph(rng: Random, refs: string[]): string {
  const parts = [words(rng, rng.range(12, 60))]
  if (rng.chance(0.3)) parts.push(`[${words(rng, 3)}](ch${String(rng.int(21)).padStart(2, '0')}-0${rng.int(6)}-${rng.pick(WORDS)}.html)`)
  if (rng.chance(0.35)) {
    const ref = `${rng.pick(WORDS)}-${refs.length}`
    refs.push(ref)
    parts.push(`[${words(rng, 2)}][${ref}]`)
  }
  parts.push(`${words(rng, rng.range(8, 40))}.`)
  const text = parts.join(' ')
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line.length + word.length + 1 > 80 && line) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  lines.push(line)
  return lines.join('\n')
}

function listing(rng: Random, chapter: number, n: number): string {
  const fence = ['```rust', '```rust,ignore', '```rust,does_not_compile', '```console', '```text'][rng.int(5)]!
  const body = rng.chance(0.4)
    ? `{{#rustdoc_include ../listings/ch${String(chapter).padStart(2, '0')}/listing-${chapter}-${String(n).padStart(2, '0')}/src/main.rs}}`
    : Array.from({ length: rng.range(3, 24) }, () => rng.pick(RUST_LINES)).join('\n')
  const code = `${fence}\n${body}\n\`\`\``
  if (!rng.chance(0.45)) return code
  return `<Listing number="${chapter}-${n}" file-name="src/main.rs" caption="${words(rng, 6).replaceAll('`', '')}">\n\n${code}\n\n</Listing>`
}

/** One image of a chapter: an mdBook HTML <img> or a Markdown one; `flawed` ones need work. */
function image(rng: Random, chapter: number, n: number, flawed: boolean): string {
  const src = `img/trpl${String(chapter).padStart(2, '0')}-0${n}.svg`
  if (rng.chance(0.5)) return flawed ? `<img src="${src}" class="center" />` : `<img alt="${rng.pick(ALTS)}" src="${src}" class="center" />`
  return flawed ? `![](${src})` : `![${rng.pick(ALTS)}](${src})`
}

type Written = { path: string; bytes: number; images: number; flawed: number }

function chapterText(rng: Random, target: number, index: number, withImages: boolean, flawedImage: boolean): { text: string; images: number } {
  const blocks: string[] = [`# ${words(rng, rng.range(2, 5)).replaceAll('`', '')}`]
  const refs: string[] = []
  let size = blocks[0]!.length
  let images = 0
  let n = 1
  while (size < target) {
    const roll = rng.next()
    let block: string
    if (roll < 0.1) block = `${rng.chance(0.7) ? '##' : '###'} ${words(rng, rng.range(2, 6)).replaceAll('`', '')}`
    else if (roll < 0.3) block = listing(rng, index, n++)
    else if (roll < 0.36) block = Array.from({ length: rng.range(2, 6) }, () => `- ${words(rng, rng.range(4, 14))}`).join('\n')
    else if (roll < 0.39)
      block = [
        '| Name | Example | Explanation |',
        '| ---- | ------- | ----------- |',
        ...Array.from({ length: rng.range(2, 8) }, () => `| \`${rng.pick(WORDS)}\` | ${words(rng, 3)} | ${words(rng, 6)} |`),
      ].join('\n')
    else if (roll < 0.43)
      block = paragraph(rng, refs)
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n')
    else if (roll < 0.45) block = '<span class="filename">Filename: src/main.rs</span>'
    else if (withImages && roll < 0.47 && images < 4) {
      block = image(rng, index, images + 1, flawedImage && images === 0)
      images++
    } else block = paragraph(rng, refs)
    blocks.push(block)
    size += block.length + 2
  }
  if (refs.length) blocks.push(refs.map((ref) => `[${ref}]: ch${String(rng.int(21)).padStart(2, '0')}-00-${ref}.html`).join('\n'))
  return { text: `${blocks.join('\n\n')}\n`, images }
}

function stubText(rng: Random, target: number, edition: string): string {
  const title = `## ${words(rng, rng.range(2, 5)).replaceAll('`', '')}`
  const page = `ch${String(rng.int(21)).padStart(2, '0')}-0${rng.int(6)}-${rng.pick(WORDS)}.html`
  const body = [
    title,
    `The ${edition} of the book is no longer distributed with Rust's documentation.`,
    `If you came here via a link or web search, you may want to check out [the current\nversion of the book](../${page}) instead.`,
    `If you have an internet connection, you can [find a copy distributed with\nRust\n1.30](https://doc.rust-lang.org/1.30.0/book/${page}).`,
  ]
  let text = body.join('\n\n')
  while (text.length < target - 40) text += `\n\n${words(rng, 12)}.`
  return `${text}\n`
}

/**
 * Writes the Markdown tree under `dir` (about 480 files, 2.7 MB in nested folders; images in some
 * chapters, a few of them flawed) and returns what was written, for the checks of the run.
 */
export function writeMarkdownCorpus(dir: string, seed = MARKDOWN_CORPUS.seed): { files: Written[]; bytes: number; images: number; flawed: number } {
  const rng = random(seed)
  const files: Written[] = []
  for (const folder of SHAPE) {
    for (let i = 0; i < folder.files; i++) {
      // Stratified: the i-th of n files draws its size from the i-th slice of the distribution.
      const target = sizeOf(folder.deciles, (i + rng.next()) / folder.files)
      const name =
        folder.kind === 'repo'
          ? ['README', 'CONTRIBUTING', 'ADMIN_TASKS', 'style-guide', 'TODO'][i % 5]!
          : `ch${String(i).padStart(2, '0')}-0${i % 7}-${rng.pick(WORDS)}`
      const path = join(dir, folder.folder, `${name}.md`)
      let text: string
      let images = 0
      let flawed = 0
      if (folder.kind === 'chapter' || folder.kind === 'print' || folder.kind === 'repo') {
        // The book has images in about one chapter of six; one in four of those has a flawed one here.
        const withImages = folder.kind !== 'repo' && rng.chance(0.18)
        const flawedImage = withImages && rng.chance(0.25)
        const chapter = chapterText(rng, target, i, withImages, flawedImage)
        text = chapter.text
        images = chapter.images
        flawed = flawedImage && images > 0 ? 1 : 0
      } else if (folder.kind === 'stub')
        text = stubText(rng, target, folder.folder.startsWith('2018') ? '2018 edition' : folder.folder.startsWith('first') ? 'first edition' : 'second edition')
      else text = stubText(rng, target, 'redirect')
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, text)
      files.push({ path, bytes: Buffer.byteLength(text), images, flawed })
    }
  }
  return {
    files,
    bytes: files.reduce((sum, file) => sum + file.bytes, 0),
    images: files.reduce((sum, file) => sum + file.images, 0),
    flawed: files.reduce((sum, file) => sum + file.flawed, 0),
  }
}

export const SHELF = { seed: 36, books: 20, minChapters: 20, maxChapters: 40, imagesPerBook: 6 }

/** A chapter's XHTML body: about 6–16 KB of sections, paragraphs and figures, a few images that need work. */
function chapterBody(rng: Random, images: string[]): string {
  const out: string[] = [`<h1>${words(rng, rng.range(2, 5)).replaceAll('`', '')}</h1>`]
  const paragraphs = rng.range(12, 36)
  for (let p = 0; p < paragraphs; p++) {
    if (p % 6 === 5) out.push(`<h2>${words(rng, 4).replaceAll('`', '')}</h2>`)
    out.push(
      `<p>${words(rng, rng.range(40, 90))
        .replace(/`([^`]*)`/gu, '<code>$1</code>')
        .replace(/[_*]+/gu, '')}</p>`,
    )
    if (rng.chance(0.12)) {
      const src = rng.pick(images)
      const roll = rng.next()
      const alt = roll < 0.7 ? ` alt="${rng.pick(ALTS)}"` : roll < 0.85 ? ' alt=""' : roll < 0.93 ? ` alt="${src.split('/').pop()}"` : ''
      out.push(`<figure><img src="${src}"${alt}/><figcaption>${words(rng, 6).replaceAll('`', '')}</figcaption></figure>`)
    }
  }
  return out.join('\n')
}

/** Writes SHELF.books EPUB 3 books under `dir`; returns their paths, content documents and images. */
export function writeShelf(dir: string, seed = SHELF.seed): { books: string[]; chapters: number; bytes: number } {
  const rng = random(seed)
  mkdirSync(dir, { recursive: true })
  const pictures: Record<string, Uint8Array> = {}
  for (let i = 0; i < SHELF.imagesPerBook; i++)
    pictures[i % 2 === 0 ? `images/plate-${i}.png` : `images/plate-${i}.jpg`] = i % 2 === 0 ? makePng(160 + i, 120) : makeJpeg(320 + i, 240)
  const books: string[] = []
  let chapters = 0
  let bytes = 0
  for (let b = 0; b < SHELF.books; b++) {
    const count = rng.range(SHELF.minChapters, SHELF.maxChapters)
    const list: Chapter[] = Array.from({ length: count }, (_, c) => ({
      name: `chapter-${String(c + 1).padStart(2, '0')}.xhtml`,
      title: `Chapter ${c + 1}`,
      body: chapterBody(rng, Object.keys(pictures)),
    }))
    const epub = buildEpub(bookFiles({ title: `Book ${b + 1}`, chapters: list, images: pictures }))
    const path = join(dir, `book-${String(b + 1).padStart(2, '0')}.epub`)
    writeFileSync(path, epub)
    books.push(path)
    chapters += count
    bytes += epub.byteLength
  }
  return { books, chapters, bytes }
}
