export default function ChannelPage () { return null }
