export default function LoginPage () { return null }
