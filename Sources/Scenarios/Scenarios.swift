/// The scenario language, its runner, the fuzzer and the shrinker.
public enum ScenariosModule {}
