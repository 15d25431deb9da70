/// The scenario language, its runner, the fuzzer and the shrinker.
package enum ScenariosModule {}
