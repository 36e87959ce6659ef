// Generation of alt text for one image.
import type { Caller } from '../auth/service'
import type { AltTextRequest, AltTextResult } from './model'

export interface AltTextService {
  generate(caller: Caller, request: AltTextRequest, signal: AbortSignal): Promise<AltTextResult>
}
