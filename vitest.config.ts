import { defineConfig } from 'vitest/config'

/**
 * Sync's integration tests run real git servers, spawn and kill processes, and fsync a lot:
 * they run after every other file, on their own, so neither slows the other down.
 */
const syncIntegration = [
  'src/main/sync/sync.test.ts',
  'src/main/sync/sync-kill.test.ts',
  'src/main/sync/transfer.test.ts',
  'src/main/sync/sync-maintenance.test.ts',
]

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [
            'src/**/*.test.ts',
            'test/**/*.test.ts',
            'bench/**/*.test.ts',
            'scripts/**/*.test.ts',
          ],
          exclude: syncIntegration,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'sync', include: syncIntegration, sequence: { groupOrder: 1 } },
      },
    ],
  },
})
