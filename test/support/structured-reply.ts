// What a model constrained to a JSON schema writes, for the fake model servers: Ollama's `format` and
// the OpenAI-compatible `response_format` both hand the server a schema that decides which fields the
// answer has and in which order (the grammar generates them in the schema's order).

/** The fields a structured answer may carry; the schema decides which of them are sent, and in which order. */
export type StructuredReply = {
  alt_text?: string
  decorative?: boolean
  decorative_reason?: string | null
  text_in_image?: string | null
  [field: string]: unknown
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function jsonKind(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value === 'object' ? 'object' : typeof value
}

/** The JSON types a schema property allows: `type` (one or a list) or the types of its `anyOf` branches. */
function schemaTypes(property: unknown): string[] {
  if (!isRecord(property)) return []
  if (typeof property.type === 'string') return [property.type === 'integer' ? 'number' : property.type]
  if (Array.isArray(property.type)) return property.type.filter((t): t is string => typeof t === 'string')
  if (Array.isArray(property.anyOf)) return property.anyOf.flatMap(schemaTypes)
  return []
}

const EMPTY: Record<string, unknown> = { string: '', boolean: false, number: 0, array: [], object: {} }

/**
 * The JSON text of an answer constrained by `schema`: an object with the schema's properties in its
 * order (a value of the wrong type, or none, gives way to the type's empty value: "", false, 0, or null
 * where allowed). Without a schema with properties (Ollama's "json", OpenAI's json_object), the fields as they are.
 */
export function structuredContent(schema: unknown, fields: StructuredReply): string {
  if (!isRecord(schema) || !isRecord(schema.properties)) return JSON.stringify(fields)
  const answer: Record<string, unknown> = {}
  for (const [name, property] of Object.entries(schema.properties)) {
    const types = schemaTypes(property)
    const value = fields[name]
    if (value !== undefined && types.includes(jsonKind(value))) answer[name] = value
    else if (types.includes('null')) answer[name] = null
    else answer[name] = EMPTY[types[0] ?? 'string'] ?? ''
  }
  return JSON.stringify(answer)
}
