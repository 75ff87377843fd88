export { bullConnection, dbPlugin, healthPlugin, redisPlugin } from './plugins.js'
export type { DbPluginOptions, HealthPluginOptions, ReadinessCheck, RedisPluginOptions } from './plugins.js'
export { fastifyOptions, runService } from './server.js'
export type { CommonServiceConfig, RunServiceOptions } from './server.js'
