// The live DOM of a rendered page as HTML the scanner reads: Chromium's own serialiser (Element.getHTML)
// with every shadow root, open and closed, written as declarative <template shadowrootmode>. Closed roots
// are not reachable from a page's scripts, so they are found through the DevTools protocol
// (DOM.getDocument with pierce) and handed to getHTML. It runs in an isolated world: a page that replaces
// getHTML or getComputedStyle in its own world changes nothing here.
import type { CDPSession } from 'playwright-core'

/** The serialised document, or how long it would have been when over `maxLength` characters. */
export type LiveDom = { html: string } | { tooLong: number }

type DomNode = {
  backendNodeId: number
  children?: DomNode[]
  shadowRoots?: (DomNode & { shadowRootType?: string })[]
  contentDocument?: DomNode
  templateContent?: DomNode
}

/** The backend ids of every author shadow root (not the browser's own, of <input> or <video>). */
function shadowRootIds(root: DomNode): number[] {
  const ids: number[] = []
  const stack: DomNode[] = [root]
  for (let node = stack.pop(); node; node = stack.pop()) {
    for (const shadow of node.shadowRoots ?? []) {
      if (shadow.shadowRootType !== 'user-agent') ids.push(shadow.backendNodeId)
      stack.push(shadow)
    }
    if (node.templateContent) stack.push(node.templateContent)
    if (node.children) for (const child of node.children) stack.push(child)
  }
  return ids
}

/**
 * Runs in the page (isolated world), as text: the project has no DOM types, and the binary's minifier
 * must not rename what the page runs. Elements with role=img whose background image comes from a style
 * sheet get it written into their style attribute (the scanner reads inline styles); then the document
 * is serialised with the shadow roots given.
 */
const SERIALISE_IN_PAGE = `function (maxLength, ...roots) {
  const url = /url\\(\\s*(['"]?)(.*?)\\1\\s*\\)/u
  const inline = /background(?:-image)?\\s*:[^;]*?url\\(/iu
  for (const scope of [this, ...roots]) {
    for (const element of scope.querySelectorAll('[role]')) {
      const tag = element.localName
      if (tag === 'img' || tag === 'input' || (element.getAttribute('role') ?? '').trim().toLowerCase().split(/\\s+/u)[0] !== 'img') continue
      if (inline.test(element.getAttribute('style') ?? '')) continue
      const found = url.exec(getComputedStyle(element).backgroundImage)
      if (found && found[2]) element.style.setProperty('background-image', 'url("' + found[2].replaceAll('"', '%22') + '")')
    }
  }
  const root = this.documentElement
  if (root === null) return { html: '' }
  const escape = (value) => value.replaceAll('&', '&amp;').replaceAll('"', '&quot;')
  const attributes = [...root.attributes].map((attribute) => ' ' + attribute.name + '="' + escape(attribute.value) + '"').join('')
  const doctype = this.doctype ? '<!DOCTYPE ' + this.doctype.name + '>' : ''
  const inner = root.getHTML({ serializableShadowRoots: true, shadowRoots: roots })
  const length = doctype.length + attributes.length + inner.length + 13
  if (length > maxLength) return { tooLong: length }
  return { html: doctype + '<html' + attributes + '>' + inner + '</html>' }
}`

/** The live DOM of the page `session` is attached to; at most `maxLength` characters. */
export async function liveDom(session: CDPSession, maxLength: number): Promise<LiveDom> {
  const { frameTree } = (await session.send('Page.getFrameTree')) as { frameTree: { frame: { id: string } } }
  const { executionContextId } = (await session.send('Page.createIsolatedWorld', { frameId: frameTree.frame.id, worldName: 'alttext-audit' })) as {
    executionContextId: number
  }
  const { root } = (await session.send('DOM.getDocument', { depth: -1, pierce: true })) as { root: DomNode }
  const resolve = async (backendNodeId: number) => {
    const { object } = (await session.send('DOM.resolveNode', { backendNodeId, executionContextId })) as { object: { objectId: string } }
    return object.objectId
  }
  const documentId = await resolve(root.backendNodeId)
  const roots = await Promise.all(shadowRootIds(root).map(resolve))
  const { result, exceptionDetails } = (await session.send('Runtime.callFunctionOn', {
    objectId: documentId,
    functionDeclaration: SERIALISE_IN_PAGE,
    arguments: [{ value: maxLength }, ...roots.map((objectId) => ({ objectId }))],
    returnByValue: true,
  })) as { result: { value?: LiveDom }; exceptionDetails?: { text: string; exception?: { description?: string } } }
  if (exceptionDetails) throw new Error(exceptionDetails.exception?.description?.split('\n')[0] ?? exceptionDetails.text)
  if (!result.value) throw new Error('the page could not be serialised')
  return result.value
}
