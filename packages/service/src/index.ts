export { bullConnection, dbPlugin, healthPlugin, redisPlugin } from './plugins.js'
export type { DbPluginOptions, HealthPluginOptions, ReadinessCheck, RedisPluginOptions } from './plugins.js'
export { exitOnConfigError, fastifyOptions, runService } from './server.js'
export type { RunServiceOptions } from './server.js'
