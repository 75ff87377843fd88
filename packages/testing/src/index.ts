export { testServers } from './servers.js'
export type { TestServers } from './servers.js'
export { createServiceEnv, createTestDatabase, createTestRedis, TEST_SECRETS, withDatabase } from './resources.js'
export type { Teardown, TestRedis } from './resources.js'
