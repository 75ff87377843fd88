// One implementation for the console's downloads and the server's CSV exports (the audit trail).
export { csvField, neutralizeCell } from '@modelgate/contracts'
