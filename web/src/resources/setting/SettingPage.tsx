export default function SettingPage () { return null }
