import type { CairnApi } from '../../shared/contract'

declare global {
  interface Window {
    /** The only door to main: named functions built from the shared contract. */
    readonly api: CairnApi
  }
}
