// Each test file that needs Redis starts its own, as the bench cases do.
export { startRedis, type TestRedis } from '../../bench/lib/redis-server.ts';
