export type { FetchedImage, HostResolver, ImageFormat, ImageIntake, ImageIntakeOptions, PreparedImage } from './types.ts'
export {
  createImageIntake,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_PIXELS,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_MAX_SIDE,
  GIF_DECODE_TIMEOUT_MS,
} from './intake.ts'
export { blockedAddressKind, isAllowedByList, isBlockedAddress } from './address.ts'
export { MAX_URL_LENGTH, systemResolver } from './fetch.ts'
export { missingWorkers } from './worker-path.ts'
