// What a TCP port may be wherever the lab takes one (topology.txt, a
// scenario's HAProxy settings and variables): a whole number from 1 to
// 65535. Port 0 asks the kernel for any free port, which nobody could then
// find; above 65535 HAProxy, Docker and the tools each fail their own way.
export const PORT_RANGE = [1, 65535];

// isPort TEXT: TEXT (a string or a number) is a port.
export const isPort = (text) => /^\d+$/.test(String(text)) && Number(text) >= PORT_RANGE[0] && Number(text) <= PORT_RANGE[1];

// portProblem TEXT: null for a port, else what is wrong and the fix.
export const portProblem = (text) => (isPort(text) ? null
  : `${JSON.stringify(String(text))} is not a port: use a whole number from ${PORT_RANGE[0]} to ${PORT_RANGE[1]}`);
