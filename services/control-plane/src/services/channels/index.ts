// Channel administration, one module per job: views of channels and their keys, listing and
// search, validating what an admin enters, creating and editing channels, changes to many
// channels at once (tags, the disabled ones, abilities), tests, and upstream model lists.
export { removeDisabledChannels, editTag, fixAbilities, setTagStatus } from './bulk.js'
export { copyChannel, createChannels, removeChannel, updateChannelFields } from './editing.js'
export { getChannelDetail, knownModels, listChannelPage } from './listing.js'
export { fetchSavedChannelModels, fetchUnsavedModels } from './models.js'
export { ChannelTestAll, type ChannelTestingDeps, type MsgPart, TEST_ALL_LOCK_KEY, type TestAnswer, testChannelNow } from './testing.js'
