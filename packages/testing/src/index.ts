export { testServers } from './servers.js'
export type { TestServers } from './servers.js'
export { createServiceEnv, createTestDatabase, createTestRedis, freePort, TEST_SECRETS, withDatabase } from './resources.js'
export type { Teardown, TestRedis } from './resources.js'
