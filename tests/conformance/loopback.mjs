// Preloaded into the stdio-to-HTTP bridge (node --import): a server told
// only a port listens on 127.0.0.1, not on every interface.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" && typeof args[1] !== "string")
    args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
