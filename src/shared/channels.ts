/**
 * The request channel names, without their schemas, so the sandboxed preload can build
 * `window.api` without bundling zod. `contract.ts` checks at compile time that this list
 * and the schemas agree.
 */
export const requestChannels = [
  'app:info',
  'app:openDataFolder',
  'app:openExternal',
  'memory:tree',
  'memory:read',
  'memory:write',
  'memory:rename',
  'memory:delete',
  'memory:search',
  'history:log',
  'history:show',
  'history:fileHistory',
  'history:readAt',
  'history:diff',
  'history:restoreFile',
  'history:restoreDeleted',
  'history:revert',
  'history:restoreAll',
  'history:blame',
  'history:search',
  'history:compare',
  'history:summaries',
  'review:list',
  'review:decide',
  'hygiene:stats',
  'hygiene:expire',
  'chat:send',
  'chat:stop',
  'conversations:list',
  'conversations:get',
  'conversations:rename',
  'conversations:delete',
  'settings:get',
  'settings:update',
  'settings:setApiKey',
  'settings:clearApiKey',
  'settings:models',
] as const

/** The single IPC channel events travel on; the event name is inside the envelope. */
export const eventChannel = 'cairn:event'
