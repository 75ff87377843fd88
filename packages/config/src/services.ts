import { type Env, loadConfig } from './load.js'
import {
  type BillingWorkerConfig,
  billingWorkerConfigSchema,
  type ControlPlaneConfig,
  controlPlaneConfigSchema,
  type GatewayConfig,
  gatewayConfigSchema,
  type StackConfig,
  type MigrateConfig,
  type TestConfig,
  testConfigSchema,
  migrateConfigSchema,
  stackConfigSchema
} from './schemas.js'

export const loadGatewayConfig = (env?: Env): Readonly<GatewayConfig> => loadConfig('gateway', gatewayConfigSchema, env)
export const loadControlPlaneConfig = (env?: Env): Readonly<ControlPlaneConfig> => loadConfig('control-plane', controlPlaneConfigSchema, env)
export const loadBillingWorkerConfig = (env?: Env): Readonly<BillingWorkerConfig> => loadConfig('billing-worker', billingWorkerConfigSchema, env)
export const loadStackConfig = (env?: Env): Readonly<StackConfig> => loadConfig('npm start', stackConfigSchema, env)
export const loadMigrateConfig = (env?: Env): Readonly<MigrateConfig> => loadConfig('migrate', migrateConfigSchema, env)
export const loadTestConfig = (env?: Env): Readonly<TestConfig> => loadConfig('tests', testConfigSchema, env)
