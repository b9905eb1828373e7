// Preloaded into node processes LocalStack starts (NODE_OPTIONS, set by
// localstack/host.sh): its Kinesis backend (npm kinesis-local) listens on
// 0.0.0.0 with no option to change it; this makes every TCP listen bind
// 127.0.0.1, so nothing here is reachable from outside the machine.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (first !== null && typeof first === 'object' && !first.path && !(first instanceof net.Server)) {
    args[0] = { ...first, host: '127.0.0.1' };
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof args[1] === 'string') args[1] = '127.0.0.1';
    else args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
