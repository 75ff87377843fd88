/**
 * Node flags every service runs with: `npm start` spawns the services with them, the images'
 * command line carries them (deploy/docker/Dockerfile, checked against this list by
 * e2e/test/deploy-files.test.ts) and the bench starts the services with them.
 *
 * `--max-semi-space-size=16` caps V8's young generation at 16 MB a semi-space, Node 20's default.
 * Node 24 sizes it from the heap limit instead, which measured here (bench relay group, 10 s,
 * alternating runs) raised the gateway's RSS under the 50-connection load from 156-160 MB on
 * Node 20 to 274-304 MB, with no gain in CPU per request; with the cap, 187-206 MB. 8 and 4 MB
 * took RSS to 167-182 MB but cost 10-40% more CPU per request in scavenges. Over a longer load
 * the old generation decides: in 12 s runs the capped gateway peaked at 188-305 MB, depending on
 * whether a mark-compact ran before the end (the gateway already bounds the old generation's
 * growth with HEAP_GROWTH_PERCENT; a 128 MB old-space limit ran the same load at 196 MB, same CPU).
 * Figures: bench/results/history.md, 2026-11-29.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16']
