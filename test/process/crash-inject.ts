/**
 * Preloaded into a real entry point by test/process/crash-handlers.test.ts (`bun --preload`): on
 * SIGUSR2 the process suffers the failure named by CRASH_KIND, from a later turn of the event
 * loop as a stray callback would. Nothing of this exists in the shipped entry points.
 */
process.on('SIGUSR2', () => {
  setImmediate(() => {
    if (process.env.CRASH_KIND === 'exception') throw new Error('injected uncaught exception')
    void Promise.reject(new Error('injected unhandled rejection'))
  })
})
