export { ConfigError, loadConfig } from './load.js'
export { placeholderSecret } from './placeholder.js'
export { SERVICE_NODE_FLAGS } from './runtime.js'
export type { Env } from './load.js'
export {
  billingWorkerConfigSchema,
  controlPlaneConfigSchema,
  gatewayConfigSchema,
  migrateConfigSchema,
  stackConfigSchema,
  testConfigSchema
} from './schemas.js'
export type { BillingWorkerConfig, ControlPlaneConfig, GatewayConfig, MigrateConfig, StackConfig, TestConfig } from './schemas.js'
export { loadBillingWorkerConfig, loadControlPlaneConfig, loadGatewayConfig, loadMigrateConfig, loadStackConfig, loadTestConfig } from './services.js'
