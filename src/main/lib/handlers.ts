import type { RequestChannel, RequestResults, ValidPayload } from '../../shared/contract'

/** The handler of one request channel: its validated payload in, its result out. */
export type Handler<C extends RequestChannel> = (
  payload: ValidPayload<C>,
) => Promise<RequestResults[C]> | RequestResults[C]

/** One handler per request channel; a missing or mistyped one is a compile error. */
export type Handlers = { readonly [C in RequestChannel]: Handler<C> }

/** The channels of one domain: `'history'` -> `history:log`, `history:show`, ... */
export type DomainChannel<D extends string> = Extract<RequestChannel, `${D}:${string}`>

/** What a domain's `index.ts` exports as its `handlers`: exactly its own channels. */
export type DomainHandlers<D extends string> = Pick<Handlers, DomainChannel<D>>
