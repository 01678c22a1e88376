/** `agent-bus logout`: forget the hub `agent-bus login` saved. */
export { runLogout as run } from './login.js';
