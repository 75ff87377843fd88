export * from './api.js'
export * from './health.js'
export * from './options.js'
export * from './status.js'
