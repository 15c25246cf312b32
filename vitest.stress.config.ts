import { defineConfig } from 'vitest/config'

/**
 * `npm run test:stress`: the machinery tests at full size (see test/stress/stress.ts), one
 * file at a time so that timing-sensitive ones (the crash and race tests) get the machine.
 */
export default defineConfig({
  test: {
    include: [
      'src/main/history/crash.test.ts',
      'src/main/history/damage.test.ts',
      'src/main/history/faults.test.ts',
      'src/main/history/fuzz.test.ts',
      'src/main/history/full-disk.test.ts',
      'src/main/memory/symlink-race.test.ts',
    ],
    environment: 'node',
    env: { CAIRN_STRESS: '1' },
    globalSetup: ['test/stress/report.ts'],
    fileParallelism: false,
    testTimeout: 3_600_000,
    hookTimeout: 120_000,
  },
})
