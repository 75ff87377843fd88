/**
 * Node flags every service runs with: `npm start` spawns the services with them, the images'
 * command line carries them (deploy/docker/Dockerfile, checked against this list by
 * e2e/test/deploy-files.test.ts) and the bench starts the services with them.
 *
 * `--max-semi-space-size=16` caps V8's young generation at 16 MB a semi-space, Node 20's default.
 * Node 24 sizes it from the heap limit instead (up to 64 MB a semi-space on a machine with a few
 * GB of memory), which measured here raised the gateway's RSS under the bench's 50-connection load
 * from 157 MB (Node 20) to 274-304 MB for no gain in throughput; with the cap, 202-206 MB and the
 * same or less CPU per request. 8 and 4 MB took RSS down to 167-182 MB but cost 10-40% more CPU
 * per request in scavenges. Figures: bench/results/history.md, 2026-11-29.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16']
