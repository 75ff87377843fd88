declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot of a key: CRC16 of its hash tag (the part in `{}`) or of the whole key. */
  function calculateSlot (key: string | Buffer): number
  export default calculateSlot
}
